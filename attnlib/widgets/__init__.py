"""Widget factories of the book (ipywidgets + matplotlib), one submodule per topic.

Every factory returns a widget whose sliders redraw the figure when their ``value``
changes, so it can be driven headless in the tests. Its box is an
:class:`~attnlib.widgets._static.ExplorerBox`: while the book is built
(``ATTNLIB_STATIC=1``) it displays as a static explorer, the figure precomputed over
a grid of the values of its main controls, which works in a page with no kernel.
"""

__all__: list[str] = []
