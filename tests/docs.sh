#!/bin/bash
# docs.sh — the documentation stands alone: no page cites the project's
# internal SPEC or reads outside the repository (../shared), every
# relative link and #anchor of docs/, README.md and the data READMEs
# leads to a file and heading that exist, the commands in their code
# blocks are written as run from a clone (bin/vramsim ...), and no
# command's --help cites SPEC. TAP output.
VRAMSIM=${VRAMSIM:-bin/vramsim}
cd "$(dirname "$0")/.." || exit 1
echo "1..4"
pages=$(ls README.md traces/README.md docs/*.md validation/data/README.md validation/data/*/README.md python/README.md)
bad=$(grep -n -w 'SPEC' $pages python/vramsim/*.py | head -5)
bad+=$(grep -n '\.\./shared' $pages python/vramsim/*.py | head -5)
[ -z "$bad" ] && echo "ok 1 - no page cites SPEC or ../shared" || { echo "not ok 1 - SPEC or ../shared cited"; echo "$bad" | sed 's/^/# /'; }
python3 - $pages <<'PY'
import os, re, sys
def slug(h):
    h = re.sub(r"[^\w\- ]", "", h.strip().lower())
    return h.replace(" ", "-")
anchors, bad = {}, []
for p in sys.argv[1:]:
    inb, a = False, set()
    for line in open(p, encoding="utf-8"):
        if line.startswith("```"):
            inb = not inb
        elif not inb and line.startswith("#"):
            a.add(slug(line.lstrip("#")))
    anchors[os.path.normpath(p)] = a
for p in sys.argv[1:]:
    text = re.sub(r"```.*?```", "", open(p, encoding="utf-8").read(), flags=re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, frag = target.partition("#")
        full = os.path.normpath(os.path.join(os.path.dirname(p), path)) if path else os.path.normpath(p)
        if not os.path.exists(full):
            bad.append("%s: %s: no such file" % (p, target))
        elif frag and full.endswith(".md") and full in anchors and frag not in anchors[full]:
            bad.append("%s: %s: no such heading" % (p, target))
        elif frag and full.endswith(".md") and full not in anchors:
            hs = {slug(l.lstrip("#")) for l in open(full, encoding="utf-8") if l.startswith("#")}
            if frag not in hs:
                bad.append("%s: %s: no such heading" % (p, target))
for b in bad[:10]:
    print("# " + b)
print("%s 2 - every relative link and anchor resolves" % ("ok" if not bad else "not ok"))
PY
# Commands in code blocks: `bin/vramsim ...` (a clone), not a bare
# `vramsim ...`; a program's own output ("vramsim fit: ...") is not a command.
bad=$(awk '/^```/ { inb = !inb; next } inb && /^(\$ )?vramsim [a-z-]+( |$)/ { print FILENAME ":" FNR ": " $0 }' $pages | head -5)
[ -z "$bad" ] && echo "ok 3 - commands in code blocks are written bin/vramsim" || { echo "not ok 3 - bare vramsim commands"; echo "$bad" | sed 's/^/# /'; }
bad=
for c in replay sweep fit plot synth convert info configs; do
  "$VRAMSIM" $c --help 2>&1 | grep -qw SPEC && bad+=" $c"
done
[ -z "$bad" ] && echo "ok 4 - no --help cites SPEC" || echo "not ok 4 - --help of$bad cites SPEC"
