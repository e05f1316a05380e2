"""From wire messages to turns: the adapter (messages -> AgentEvents), tool normalisation
(NormalizedPayload), events, the Turn record, permissions and approvals, the Session.

Imports only :mod:`kandev_nb.wire`.
"""
