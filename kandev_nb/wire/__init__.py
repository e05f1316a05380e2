"""The CLI's side of the wire: finding it and its argv, the stdio and WebSocket transports,
NDJSON framing, the stream-json message models, the control plane, record and replay.

Imports nothing else of kandev_nb.
"""
