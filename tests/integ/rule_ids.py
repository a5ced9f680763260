# SPDX-License-Identifier: MIT
# Prints every string literal of the C files under the given folders that
# carries a rule id (S0-2, S4-10: the ids that code comments and
# docs/DESIGN-NOTES.md cite).  The strings of the code are what operators
# read (errors, logs, explain) and speak the operator's language;
# comments may cite rule ids and are skipped.
# Exit status 1 when any is found.
import glob
import re
import sys

RULE = re.compile(r'\bS\d-\d+\b')
STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')


def code_only(s):
    """@s with its comments blanked (newlines kept), strings intact."""
    out, i, n = [], 0, len(s)
    while i < n:
        if s.startswith('/*', i):
            j = s.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', s[i:j]))
            i = j
        elif s.startswith('//', i):
            j = s.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i))
            i = j
        elif s[i] in '"\'':
            q, j = s[i], i + 1
            while j < n and s[j] != q and s[j] != '\n':
                j += 2 if s[j] == '\\' else 1
            out.append(s[i:j + 1])
            i = j + 1
        else:
            out.append(s[i])
            i += 1
    return ''.join(out)


found = 0
for root in sys.argv[1:]:
    for f in sorted(glob.glob(root + '/**/*.[ch]', recursive=True)):
        with open(f, encoding='utf-8') as fh:
            text = code_only(fh.read())
        for ln, line in enumerate(text.split('\n'), 1):
            for m in STRING.finditer(line):
                if RULE.search(m.group()):
                    print('%s:%d: %s' % (f, ln, m.group()))
                    found += 1
sys.exit(1 if found else 0)
