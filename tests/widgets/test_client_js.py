"""The vendored client library (kandev_nb/static/kandev_lib.js) run under Node: Markdown safety,
highlighting, and the stable-block boundary the streaming view relies on."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from kandev_nb.notebook.widgets.stream import ASSETS

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="needs node")


def run_js(body: str) -> object:
    script = (
        f"await import({json.dumps((ASSETS / 'kandev_lib.js').as_uri())});\nconst L = globalThis.__kandevNb;\n" + body
    )
    assert NODE is not None
    out = subprocess.run(
        [NODE, "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60, check=True
    )
    return json.loads(out.stdout)


def test_markdown_is_safe_and_highlighted() -> None:
    html = run_js(
        "console.log(JSON.stringify(L.renderMarkdown("
        '"<img src=x onerror=alert(1)>\\n\\n[a](javascript:alert(1)) [b](https://x.org)\\n\\n'
        '```python\\ndef f(): pass\\n```\\n\\n| a |\\n|---|\\n| 1 |\\n")))'
    )
    assert isinstance(html, str)
    assert "<img" not in html and "&lt;img" in html
    assert "javascript:" not in html and 'href="https://x.org"' in html
    assert 'class="hljs-keyword">def<' in html and "<table>" in html


def test_stable_boundary_never_splits_a_fence_and_only_grows() -> None:
    text = "intro para\n\n```python\nx = 1\n\ny = 2\n```\n\n- a\n\n- b\n\nnext para\n\nlast"
    res = run_js(f"""
const text = {json.dumps(text)};
const ends = [];
let stable = 0;
for (let i = 1; i <= text.length; i++) {{ stable = L.stableEnd(text.slice(0, i), stable); ends.push(stable); }}
console.log(JSON.stringify({{ends, whole: L.stableEnd(text, 0)}}));
""")
    assert isinstance(res, dict)
    ends, whole = res["ends"], res["whole"]
    assert ends == sorted(ends) and ends[-1] == whole
    fence_open, fence_close = text.index("```python"), text.index("```\n\n-") + 3
    assert not any(fence_open < e < fence_close for e in ends)
    assert text[whole:] == "last" or text[whole:].startswith("next para")


def test_the_live_renderer_shows_remote_images_as_links() -> None:
    html = run_js(
        "console.log(JSON.stringify(L.renderMarkdown("
        '"![x](http://host/leak?k=SECRET) ![y](pic.png) ![z](data:image/png;base64,iVBORw0KGgo=)")))'
    )
    assert isinstance(html, str)
    assert 'href="http://host/leak?k=SECRET"' in html and 'href="pic.png"' in html
    assert html.count("<img") == 1 and '<img src="data:image/png;base64,' in html  # inline data fetches nothing
