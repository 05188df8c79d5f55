# Started by the kernels that execute the chapters while the book is built (bookext
# sets IPYTHONDIR to the folder above): the text form of a matplotlib figure gives
# its caption and alternative text (attnlib.viz._screens.figure_text: those the
# chapter wrote with attnlib.viz.caption, else a description of its panels)
# instead of "<Figure size ...>", and bookext makes them the caption and the
# alternative text of the figure's image. Its PNG is drawn for a desktop's column
# and, when its panels sit in a row or its text would read too small on a phone,
# carries a second PNG drawn for a phone's column (attnlib.viz._screens.screen_pngs),
# which bookext shows on narrow screens. Each PNG records, in a text chunk, the
# height in its pixels of its smallest text (attnlib.viz._render.mark_text_size),
# which the page check measures.
#
# When pyplot activates the inline backend, IPython's select_figure_formats removes
# every printer of Figure, these included. So pyplot's backend is loaded here first
# (the inline backend becomes active and selects its formats now), the printers are
# registered after it, and again before every cell, in case a cell selects the
# formats anew (%config InlineBackend.figure_formats, another backend).


def _attnlib_describe_figures():
    import base64

    shell = get_ipython()  # noqa: F821
    formatters = shell.display_formatter.formatters

    def describe_figure(fig, printer, cycle):
        from attnlib.viz._screens import figure_text

        printer.text(figure_text(fig))

    def measured(png_printer):
        """The inline backend's PNG printer, drawing the figure for both screens
        and recording the size of its text in each PNG."""

        def print_png(fig):
            from attnlib.viz._render import mark_text_size, record_text_sizes
            from attnlib.viz._screens import attach_phone, screen_pngs

            first = []

            def draw():
                with record_text_sizes() as sizes:
                    out = png_printer(fig)
                data, meta = out if isinstance(out, tuple) else (out, None)
                if not first:
                    first.append((data, meta))
                if data is None:
                    raise LookupError("the figure draws nothing")
                raw = base64.b64decode(data) if isinstance(data, str) else data
                return raw, sizes

            try:
                (png, sizes), phone = screen_pngs(fig, draw)
            except LookupError:
                data, meta = first[0]
                return data if meta is None else (data, meta)
            marked = mark_text_size(png, sizes)
            if phone is not None:
                marked = attach_phone(marked, mark_text_size(*phone))
            data, meta = first[0]
            data = (
                base64.b64encode(marked).decode("ascii")
                if isinstance(data, str)
                else marked
            )
            # the size the printer gave (a retina screen's half) is no longer it
            meta = {
                k: v for k, v in (meta or {}).items() if k not in ("width", "height")
            }
            return (data, meta) if meta else data

        print_png.attnlib_measured = True
        return print_png

    def register(*_):
        formatters["text/plain"].for_type_by_name(
            "matplotlib.figure", "Figure", describe_figure
        )
        try:
            from matplotlib.figure import Figure
        except ImportError:
            return
        png = formatters["image/png"]
        try:
            current = png.lookup_by_type(Figure)
        except KeyError:
            return
        if not getattr(current, "attnlib_measured", False):
            png.for_type(Figure, measured(current))

    try:
        import matplotlib
        import matplotlib.pyplot as plt
    except ImportError:
        pass
    else:
        # pyplot loads its backend at the first figure: load it now
        plt.switch_backend(matplotlib.rcParams["backend"])
    register()
    shell.events.register("pre_execute", register)


_attnlib_describe_figures()
del _attnlib_describe_figures
