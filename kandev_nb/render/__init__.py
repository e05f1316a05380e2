"""Pure renderings of events and turns: live card HTML, Markdown text, and the saved
text/html + text/markdown of a finished turn. No ipywidgets.

Imports :mod:`kandev_nb.agent` (and the wire below it).
"""
