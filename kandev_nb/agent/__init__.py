"""From wire messages to turns: the adapter (messages -> AgentEvents), tool normalisation
(NormalizedPayload), events, the Turn record, permissions and approvals, the Session.

=================  ==========================================================================
``adapter``        wire messages -> AgentEvents (dedup, pending tools, UUIDs, context window)
``tools``          tool_use / tool_result -> NormalizedPayload
``events``         the AgentEvent models
``turn``           the Turn record
``permissions``    modes, Approval (answered once); Rules policies live in kandev_nb.policy
``approvals``      the ApprovalBroker: can_use_tool and unasked tools/call, answered once
``connection``     CLIConnection: one CLI process, its reader, control routing, MCP dispatch
``config``         the frozen SessionConfig (-> wire LaunchOptions)
``session``        the Session: turns, resume, fork, retry, inactivity timer, interrupts, modes
=================  ==========================================================================

Imports only :mod:`kandev_nb.wire`.
"""
