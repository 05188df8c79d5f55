"""Widget factories of the book (ipywidgets + matplotlib), one submodule per topic.

Every factory returns an :class:`Explorer`: named controls (also its attributes,
``e.beta``), a figure (``e.fig``) and the output area that shows it. Setting a
control's ``value`` redraws the figure, so an explorer can be driven headless in the
tests. While the book is built (``ATTNLIB_STATIC=1``) it displays as a static
explorer, the figure precomputed over a grid of the values of its main controls,
which works in a page with no kernel.

The pieces of an explorer are public, for a chapter that builds its own: the
:class:`Explorer`, the :class:`Axis` of values and the :class:`StaticSpec` of its
static form, and :func:`show`, which shows a figure in its output area.
"""

from ._static import Axis, Explorer, StaticSpec, show

__all__: list[str] = ["Explorer", "Axis", "StaticSpec", "show"]
