# Started by the kernels that execute the chapters while the book is built (bookext
# sets IPYTHONDIR to the folder above): the text form of a matplotlib figure
# describes it (its title, panels, axes and what they draw; attnlib.viz.describe)
# instead of "<Figure size ...>", and bookext makes it the alternative text and the
# caption of the figure's image.
#
# When pyplot activates the inline backend, IPython's select_figure_formats removes
# every printer of Figure, this one included. So pyplot's backend is loaded here first
# (the inline backend becomes active and selects its formats now), the printer is
# registered after it, and again before every cell, in case a cell selects the
# formats anew (%config InlineBackend.figure_formats, another backend).


def _attnlib_describe_figures():
    shell = get_ipython()  # noqa: F821

    def describe_figure(fig, printer, cycle):
        from attnlib.viz import describe

        printer.text("Figure: " + describe(fig))

    def register(*_):
        shell.display_formatter.formatters["text/plain"].for_type_by_name(
            "matplotlib.figure", "Figure", describe_figure
        )

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
