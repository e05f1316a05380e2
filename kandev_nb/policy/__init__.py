"""Approval policy pieces that hold in every mode: what an allow binds to (``binding``)."""
