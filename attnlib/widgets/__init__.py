"""Widget factories of the book (ipywidgets + matplotlib), one submodule per topic.

Every factory returns a widget whose sliders redraw the figure when their ``value``
changes, so it can be driven headless in the tests.
"""
