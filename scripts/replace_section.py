"""Replaces the text between <!-- bench:NAME:start --> and <!-- bench:NAME:end --> in a Markdown
file with standard input (appending the section if the markers are missing)."""
import sys

path, name = sys.argv[1], sys.argv[2]
start, end = f"<!-- bench:{name}:start -->", f"<!-- bench:{name}:end -->"
body = sys.stdin.read().strip()
text = open(path).read()
if start in text and end in text:
    before, rest = text.split(start, 1)
    _, after = rest.split(end, 1)
    text = f"{before}{start}\n{body}\n{end}{after}"
else:
    text = f"{text.rstrip()}\n\n{start}\n{body}\n{end}\n"
open(path, "w").write(text)
