"""Permission rules in Claude Code's syntax: parsed, matched, and combined into a policy.

The single home of kandev-nb's rule logic:

==================  ==========================================================================
``rules``           one rule (``Bash(git push:*)``, ``WebFetch(domain:x.com)``, ``Read(./.env)``)
                    parsed into a typed :class:`Rule`; :class:`~kandev_nb.errors.RuleError`
                    for what the matcher does not understand
``shell``           a Bash command read with tree-sitter-bash into every simple command it runs
                    (:func:`parse_command`), and what cannot be read statically
``wrappers``        commands that run other commands (``sudo``, ``timeout``, ``su -c``...) and
                    what runs code of its own (interpreters, test runners, build tools)
``files``           files ``allow_edits_under`` never covers, files build tools execute
``policy``          :class:`Rules` (deny beats ask beats allow), :class:`Verdict`,
                    :func:`rule_matches`
``enforce``         the PreToolUse hook that enforces the deny side of a policy in every mode
``grants``          "Allow for session" scoped like the CLI's own suggestions
``binding``         an allow bound to the exact payload its card showed
==================  ==========================================================================
"""

from kandev_nb.errors import RuleError
from kandev_nb.policy.files import SENSITIVE_DIRS, SENSITIVE_FILES, executed_by, is_sensitive_path
from kandev_nb.policy.policy import ApprovalPolicy, PolicyAnswer, Rules, Verdict, rule_matches, rule_reaches
from kandev_nb.policy.rules import Rule, parse_rule
from kandev_nb.policy.shell import ParsedCommand, SimpleCommand, parse_command

__all__ = [
    "SENSITIVE_DIRS",
    "SENSITIVE_FILES",
    "ApprovalPolicy",
    "ParsedCommand",
    "PolicyAnswer",
    "Rule",
    "RuleError",
    "Rules",
    "SimpleCommand",
    "Verdict",
    "executed_by",
    "is_sensitive_path",
    "parse_command",
    "parse_rule",
    "rule_matches",
    "rule_reaches",
]
