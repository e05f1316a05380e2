"""The notebook front end: the `%%claude` magic, its settings and state, attachments,
and the ipywidgets views. Only the extension entry point (:mod:`kandev_nb`) imports it.
"""
