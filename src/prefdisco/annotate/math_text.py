"""Problems, questions and answers with their LaTeX rendered, for the pages people read (the ``math`` filter).

MATH-500, AIME and MaScQA problems are written in LaTeX (``$\\frac{3}{4}$``, ``\\[x^2 + 1\\]``), and so are most
answers to them; shown raw, a participant reads markup instead of the problem. Each math segment — ``$$…$$`` and
``\\[…\\]`` (display), ``\\(…\\)`` and ``$…$`` (inline) — becomes MathML (``latex2mathml``), which every current
browser draws without a script or a download; the text around it is HTML-escaped. An inline ``$`` opens math only
before a non-space and closes it only after one and not before a digit, so "$5 and $10" stays text.

The MathML is rebuilt element by element from a MathML allowlist (``TAGS``, ``ATTRIBUTES``): a ``\\text{<script>}``
that the converter copies through verbatim comes out as text, never as markup. A segment the converter cannot read
is shown as it was written, escaped.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from markupsafe import Markup, escape

MATH = re.compile(
    r"\$\$(?P<d1>.+?)\$\$"
    r"|\\\[(?P<d2>.+?)\\\]"
    r"|\\\((?P<i1>.+?)\\\)"
    r"|(?<![\\$\w])\$(?=\S)(?P<i2>[^$\n]*?\S)\$(?!\d)",
    re.DOTALL,
)
NS = "{http://www.w3.org/1998/Math/MathML}"
TAGS = frozenset(
    [
        "math",
        "mrow",
        "mi",
        "mn",
        "mo",
        "ms",
        "mtext",
        "mspace",
        "mfrac",
        "msqrt",
        "mroot",
        "msub",
        "msup",
        "msubsup",
        "munder",
        "mover",
        "munderover",
        "mtable",
        "mtr",
        "mtd",
        "mstyle",
        "mpadded",
        "mphantom",
        "menclose",
        "merror",
        "semantics",
        "annotation",
        "mmultiscripts",
        "mprescripts",
        "none",
    ]
)
"""The MathML elements kept (presentation MathML); any other element is replaced by its text."""
ATTRIBUTES = frozenset(
    [
        "display",
        "mathvariant",
        "stretchy",
        "fence",
        "separator",
        "form",
        "lspace",
        "rspace",
        "largeop",
        "movablelimits",
        "accent",
        "accentunder",
        "columnalign",
        "rowalign",
        "columnspacing",
        "rowspacing",
        "columnlines",
        "rowlines",
        "frame",
        "width",
        "height",
        "depth",
        "linethickness",
        "notation",
        "scriptlevel",
        "displaystyle",
        "minsize",
        "maxsize",
        "symmetric",
    ]
)


def math_html(text: str | None) -> Markup:
    """``text`` as HTML: escaped, its math segments as MathML."""
    if not text:
        return Markup("")
    out: list[str] = []
    last = 0
    for found in MATH.finditer(text):
        out.append(str(escape(text[last : found.start()])))
        display = found.group("d1") is not None or found.group("d2") is not None
        latex = next(g for g in found.group("d1", "d2", "i1", "i2") if g is not None)
        out.append(_mathml(latex, display) or str(escape(found.group(0))))
        last = found.end()
    out.append(str(escape(text[last:])))
    return Markup("".join(out))


def _mathml(latex: str, display: bool) -> str | None:
    """The MathML of ``latex``, rebuilt from the allowlist; None when it cannot be converted."""
    from latex2mathml.converter import convert

    try:
        root = ET.fromstring(convert(latex.strip(), display="block" if display else "inline"))
    except Exception:  # the converter's own errors are many kinds; any of them: show the LaTeX as written
        return None
    return _element(root)


def _element(node: ET.Element) -> str:
    tag = node.tag.removeprefix(NS)
    inner = str(escape(node.text or "")) + "".join(_element(child) + str(escape(child.tail or "")) for child in node)
    if tag not in TAGS:
        return inner
    kept = "".join(f' {k}="{escape(v)}"' for k, v in node.attrib.items() if k in ATTRIBUTES)
    xmlns = ' xmlns="http://www.w3.org/1998/Math/MathML"' if tag == "math" else ""
    return f"<{tag}{xmlns}{kept}>{inner}</{tag}>"
