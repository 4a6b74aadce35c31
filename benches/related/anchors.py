"""A lead for related notes, measured and not built: the words around the links to a candidate
in the notes that link it (its anchor text), against the note's own words, as one more figure
beside today's.

    RELATED_DUMP=/tmp/dump cargo bench --bench related -- --all
    python3 benches/related/anchors.py /tmp/dump ../shared/vaults/obsidian-help   # needs numpy

For each candidate: the lines of other notes that link it, without any link's text, as one
tf-idf vector; its cosine with the note's words (link texts left out, so a hidden link's name
says nothing). Weighed on half the languages and measured on the other half. On stop 52's
final dump (with link_folder and alike_link), fit.py's figure, mean / lowest: 0.720 / 0.679 ->
0.730 / 0.689 at weight 2, 0.738 / 0.686 at 5; each half gains alike. It needs the contexts in the index (the body is not stored): a field per
note of the words around the links to it, kept fresh when a note linking it changes.
"""
import collections
import glob
import json
import math
import os
import re
import sys

import numpy as np

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import fit  # noqa: E402

ROOT = sys.argv[2] if len(sys.argv) > 2 else 'obsidian-help'
LINK=re.compile(r'!?\[\[([^\]|#]*)(?:#[^\]|]*)?(?:\|([^\]]*))?\]\]')
WORD=re.compile(r'\w+')
def words(t): return [w.lower() for w in WORD.findall(t) if not w.isdigit()]
def load_lang(lang):
    notes={}
    for p in glob.glob(f'{ROOT}/{lang}/**/*.md', recursive=True):
        rel=os.path.relpath(p, f'{ROOT}/{lang}')
        notes[rel]=open(p,encoding='utf-8',errors='replace').read()
    by_stem=collections.defaultdict(list)
    for rel in notes: by_stem[os.path.basename(rel)[:-3].lower()].append(rel)
    def resolve(t):
        t=t.strip().lower()
        if not t: return None
        if t.endswith('.md'): t=t[:-3]
        c=by_stem.get(os.path.basename(t))
        return c[0] if c else None
    anchors=collections.defaultdict(list)   # target -> list of (source, words)
    plain={}
    for rel,t in notes.items():
        for line in t.splitlines():
            for m in LINK.finditer(line):
                tgt=resolve(m.group(1))
                if tgt and tgt!=rel:
                    ctx=LINK.sub(' ', line)  # the line's words without any link text
                    anchors[tgt].append((rel, words(ctx)))
        plain[rel]=words(LINK.sub(' ', t))
    return notes, anchors, plain
def feature(lang, dumpfile):
    notes, anchors, plain = load_lang(lang)
    N=len(plain); df=collections.Counter()
    for ws in plain.values(): df.update(set(ws))
    idf=lambda w: math.log(N/(df[w]+1)) if df[w] else 0.0
    def vec(ws):
        c=collections.Counter(ws); v={w:(1+math.log(n))*idf(w) for w,n in c.items() if idf(w)>0}
        norm=math.sqrt(sum(x*x for x in v.values())) or 1
        return {w:x/norm for w,x in v.items()}
    d=json.load(open(dumpfile)); out=[]
    for m in d['measured']:
        X=m['rel']; xv=vec(plain.get(X,[]))
        seen=set(m['visible'])|{X}
        cands=sorted(set(m['evidence'])-seen)
        hidden=set(m['hidden'])
        f=[]
        for c in cands:
            ctx=[w for (src,ws) in anchors.get(c,[]) if src != X for w in ws]
            cv=vec(ctx); f.append(sum(xv.get(w,0)*x for w,x in cv.items()))
        x=np.array([m['evidence'][c] for c in cands],dtype=float).reshape(-1,len(fit.NAMES))
        y=np.array([c in hidden for c in cands])
        out.append((np.column_stack([x,np.array(f)]),y,len(hidden)))
    return out
data={}
for path in sorted(glob.glob(sys.argv[1]+'/*.json')):
    lang=os.path.basename(path)[:-5]
    data[lang]=feature(lang,path)
langs=sorted(data); A=langs[0::2]; B=langs[1::2]
def rec(sub,w):
    r={}
    for l in sub:
        t=0
        for x,y,h in data[l]:
            if len(y): t+=y[np.argsort(-(x@w),kind='stable')[:10]].sum()/h
        r[l]=t/len(data[l])
    return np.mean(list(r.values())), min(r.values())
w0=np.array(fit.START+[0.0])
print('base A %.3f %.3f B %.3f %.3f all %.3f %.3f'%(rec(A,w0)+rec(B,w0)+rec(langs,w0)))
for a in [0.5, 1.0, 2.0, 3.0, 5.0]:
    w=w0.copy(); w[-1]=a
    print(a,'A %.3f %.3f B %.3f %.3f all %.3f %.3f'%(rec(A,w)+rec(B,w)+rec(langs,w)), flush=True)
