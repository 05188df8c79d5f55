"""Plotting helpers of the book (matplotlib). One submodule per chapter topic."""
