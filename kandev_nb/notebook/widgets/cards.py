"""Live tool cards: one :class:`ToolCard` per `tool_use`, by NormalizedPayload kind.

A card is a ``VBox`` holding one ``HTML`` (a ``<details>`` element: the card's
:class:`~kandev_nb.render.card_view.CardView` rendered by :mod:`kandev_nb.render.card_html`,
the same view and renderer the saved copy uses), a "Show all"
button when an output was cut, and, for subagent cards, a box of nested cards and text for
the events whose `parent_tool_use_id` is this card's `tool_use_id`.

The full output is sent to the browser only when "Show all" is clicked; it always stays in
Python (:attr:`ToolCard.output`, and ``kandev_nb.tool_call(id).update.output``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import ipywidgets as w
from ipywidgets.widgets.widget_string import HTMLStyle

from kandev_nb.agent import events as ev
from kandev_nb.agent import tools as t
from kandev_nb.render import card_html as ch
from kandev_nb.render import html as r
from kandev_nb.render import theme as th
from kandev_nb.render.card_view import CardView, card_view
from kandev_nb.render.reveal import displayable

__all__ = ["TodoCard", "ToolCard", "WidgetFactory"]

_W = TypeVar("_W", bound=w.Widget)


class WidgetFactory:
    """Makes widgets that share one Layout and one style per kind, and remembers them all.

    Sharing saves a comm_open (layout/style model, ~0.5-1 KB each) per widget; remembering
    lets :meth:`close_all` free every model of a finished turn.
    """

    def __init__(self) -> None:
        self.created: list[w.Widget] = []
        self._layout = self.track(w.Layout())
        self._html_style = self.track(HTMLStyle())
        self._button_style = self.track(w.ButtonStyle())
        self._button_layout = self.track(w.Layout(width="auto"))

    def track(self, widget: _W) -> _W:
        """Remember `widget` for :meth:`close_all`; returns it."""
        self.created.append(widget)
        return widget

    def html(self, value: str = "", *classes: str) -> w.HTML:
        """An ``HTML`` widget with the shared layout and style and `classes` as _dom_classes."""
        return self.track(w.HTML(value=value, layout=self._layout, style=self._html_style, _dom_classes=classes))

    def button(self, description: str, *classes: str, tooltip: str = "", button_style: str = "") -> w.Button:
        """A ``Button`` with the shared (auto-width) layout and style."""
        return self.track(
            w.Button(
                description=description,
                tooltip=tooltip,
                button_style=button_style,
                layout=self._button_layout,
                style=self._button_style,
                _dom_classes=classes,
            )
        )

    def vbox(self, children: tuple[w.Widget, ...] = (), *classes: str) -> w.VBox:
        """A ``VBox`` with the shared layout."""
        return self.track(w.VBox(children=children, layout=self._layout, _dom_classes=classes))

    def hbox(self, children: tuple[w.Widget, ...] = (), *classes: str) -> w.HBox:
        """An ``HBox`` (its own layout: it wraps and centres its items)."""
        layout = self.track(w.Layout(flex_flow="row wrap", align_items="center"))
        return self.track(w.HBox(children=children, layout=layout, _dom_classes=classes))

    def close_all(self, *, shed: bool = False) -> None:
        """Close every widget made here (children first), freeing their comms and models.

        `shed`: first empty each widget's page code (anywidget's ``_esm`` / ``_css``). A
        headless run (nbclient, papermill, ``jupyter execute``) saves every widget state it saw
        in the notebook's metadata, closed or not; a finished turn's widgets are shown by the
        static rendering, so their JavaScript (tens of KB each) is only dead weight there.
        """
        seen: set[int] = set()
        for widget in reversed(self.created):
            for part in (widget, getattr(widget, "layout", None), getattr(widget, "style", None)):
                if isinstance(part, w.Widget) and id(part) not in seen:
                    seen.add(id(part))
                    if shed:
                        for name in ("_esm", "_css"):
                            if part.has_trait(name) and getattr(part, name):
                                setattr(part, name, "")
                    part.close()
        self.created.clear()


class ToolCard:
    """The live card of one tool call.

    Attributes:
        box: the card's root ``VBox`` (_dom_classes ``kandev-tool-card``, ``kandev-kind-<kind>``).
        html: the ``<details>`` HTML (summary line and body).
        nested: for subagent cards, the box of nested cards and text; else None.
        more: the "Show all" button once an output was cut, else None.
        payload, output, status, duration_ms: the latest values (full, never cut).
    """

    def __init__(self, call: ev.ToolCall, factory: WidgetFactory) -> None:
        self.call = call
        self.tool_call_id = call.tool_call_id
        self.factory = factory
        self.payload: t.NormalizedPayload = call.normalized
        self.output = ""
        self.images: tuple[str, ...] = ()
        self.status = "running"
        self.duration_ms: int | None = None
        self.decision: ev.PermissionDecided | None = None
        self.folded: bool | None = None
        self.full = False
        self.on_full: list[Callable[[], None]] = []  # called by show_all (an attached approval card)
        self.html = factory.html("", "kandev-tool-html")
        self.more: w.Button | None = None
        self.nested: w.VBox | None = None
        kids: tuple[w.Widget, ...] = (self.html,)
        if self.payload.kind == "subagent_task":
            self.nested = factory.vbox((), "kandev-nested")
            kids += (self.nested,)
        self.box = factory.vbox(kids, "kandev-tool-card", f"kandev-kind-{self.payload.kind}", "kandev-status-running")
        self._render()
        self._offer_more()  # an Edit's diff is known before it runs (and before its approval)

    @property
    def kind(self) -> str:
        """The payload kind (modify_file, shell_exec, read_file, ...)."""
        return self.payload.kind

    @property
    def view(self) -> CardView:
        """The card's :class:`~kandev_nb.render.card_view.CardView` from its latest values
        (the saved copy, :func:`kandev_nb.render.static.card_of`, builds the same one)."""
        return card_view(
            self.call.tool_name,
            self.call.title,
            self.payload,
            self.output,
            status=self.status,
            tool_use_id=self.tool_call_id,
            duration_ms=self.duration_ms,
            decision=self.decision,
            images=self.images,
        )

    def _render(self) -> None:
        view = self.view
        open_ = self.full or view.open_by_default(live=True)
        if self.folded is not None:
            open_ = not self.folded
        card = ch.live_card_html(view, open_=open_, full=self.full)
        # the rules its code and table classes need, also before KandevLib's CSS is in the page
        self.html.value = displayable(th.style_block(card) + card)

    def update(self, event: ev.ToolUpdate, duration_ms: int | None = None) -> None:
        """Apply a tool_result: status, enriched payload, output; adds "Show all" if cut."""
        self.payload = event.normalized
        self.output = event.output
        self.images = event.images
        self.status = event.status
        self.duration_ms = duration_ms
        self.box._dom_classes = tuple(c for c in self.box._dom_classes if not c.startswith("kandev-status-")) + (
            f"kandev-status-{self.status}",
        )
        with self.html.hold_sync():
            self._render()
        self._offer_more()

    def _offer_more(self) -> None:
        """Add the "Show all" / "Show the whole diff" button once some text is cut."""
        view = self.view
        if self.full or self.more is not None or not ch.is_cut(view):
            return
        is_diff = ch.diff_is_cut(view)
        self.more = self.factory.button(
            "Show the whole diff" if is_diff else "Show all",
            "kandev-show-all",
            tooltip="Send the full text to the browser",
        )
        self.more.on_click(lambda _b: self.show_all())
        note = "diff cut" if is_diff else f"output cut: {r.fmt_tokens(len(self.output))} characters in total"
        self.box.children = (
            self.html,
            self.factory.html(f'<span style="color:{th.MUTED};font-size:85%">{note}</span>', "kandev-cut-note"),
            self.more,
            *self.box.children[1:],
        )

    def set_decision(self, decision: ev.PermissionDecided) -> None:
        """Show how this call's approval ended (a deny: "⊘ denied by ..., not run", and why)."""
        self.decision = decision
        if decision.updated_input is not None and self.status == "running":  # the input that runs
            self.payload = t.normalize_tool_call(self.call.tool_name, decision.updated_input)
        if ch.denied(decision):
            self.box._dom_classes = (*self.box._dom_classes, "kandev-denied")
        self._render()

    def fold(self, folded: bool | None) -> None:
        """Fold the card to its summary line (True), open it (False), or go back to its own
        rule (None: edits, commands, plans and errors open). The view folds the cards of
        finished tools while an approval waits, and a card whose approval waits."""
        if folded != self.folded:
            self.folded = folded
            self._render()

    def show_all(self) -> None:
        """Render every text in full (sends the full output now) and drop the button; the
        approval card standing in for this card (:attr:`on_full`) shows the whole edit too."""
        self.full = True
        for callback in self.on_full:
            callback()
        self._render()
        if self.more is not None:
            self.more.disabled = True
            self.box.children = tuple(
                c
                for c in self.box.children
                if c is not self.more and "kandev-cut-note" not in getattr(c, "_dom_classes", ())
            )


class TodoCard:
    """The agent's task list, a live checklist updated in place (Todos events)."""

    def __init__(self, factory: WidgetFactory, items: tuple[t.TodoItem, ...] = ()) -> None:
        self.items = items
        self.html = factory.html("", "kandev-todo-card")
        self.box = self.html
        self.set(items)

    def set(self, items: tuple[t.TodoItem, ...]) -> None:
        """Replace the list (the Todos event is replace-all)."""
        self.items = items
        done = sum(1 for i in items if i.status == "completed")
        style = "color:var(--jp-content-font-color2,#57606a);font-size:90%"
        head = f'<div style="{style}">Tasks {done}/{len(items)} done</div>'
        self.html.value = head + ch.todos_html(items)


Clicked = Callable[[w.Button], None]
