# Started by the kernels that execute the chapters while the book is built (bookext
# sets IPYTHONDIR to the folder above): the text form of a matplotlib figure
# describes it (its title, panels and axes; attnlib.viz.describe) instead of
# "<Figure size ...>", and bookext makes it the alternative text and the caption of
# the figure's image.


def _describe_figure(fig, printer, cycle):
    from attnlib.viz import describe

    printer.text("Figure: " + describe(fig))


get_ipython().display_formatter.formatters["text/plain"].for_type_by_name(  # noqa: F821
    "matplotlib.figure", "Figure", _describe_figure
)
