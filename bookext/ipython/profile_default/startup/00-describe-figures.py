# Started by the kernels that execute the chapters while the book is built (bookext
# sets IPYTHONDIR to the folder above): the text form of a matplotlib figure
# describes it (its title, panels, axes and what they draw; attnlib.viz.describe)
# instead of "<Figure size ...>", and bookext makes it the alternative text and the
# caption of the figure's image. Its PNG records, in a text chunk, the height in its
# pixels of the smallest text drawn (attnlib.viz.mark_text_size), from which the
# pages keep the figure legible on a phone and the page check measures it there.
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
        from attnlib.viz import describe

        printer.text("Figure: " + describe(fig))

    def measured(png_printer):
        """The inline backend's PNG printer, recording the figure's text sizes."""

        def print_png(fig):
            from attnlib.viz import mark_text_size, record_text_sizes

            with record_text_sizes() as sizes:
                out = png_printer(fig)
            data, meta = out if isinstance(out, tuple) else (out, None)
            if data is None:
                return out
            raw = base64.b64decode(data) if isinstance(data, str) else data
            marked = mark_text_size(raw, sizes)
            data = (
                base64.b64encode(marked).decode("ascii")
                if isinstance(data, str)
                else marked
            )
            return data if meta is None else (data, meta)

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
