"""The hybrid search's fusion, refitted offline: reads the rankings `EMBED_DUMP=FILE cargo bench
--bench embed -- --model DIR` wrote and prints, per fusion and weight, the questions answered
in the top 5 and the mean reciprocal rank, on the development and held-out questions. Fit on
`dev` only; `held_out` is read afterwards.

    python3 benches/embed/fuse.py FILE
"""
import json
import sys

Q = [json.loads(l) for l in open(sys.argv[1])]
def rank_of(order, ans):
    for i,p in enumerate(order):
        if p in ans: return i+1
    return 99
def minmax(xs):
    if not xs: return {}
    hi=max(x for _,x in xs); lo=min(x for _,x in xs)
    return {p:((x-lo)/(hi-lo) if hi>lo else 1.0) for p,x in xs}
def current(q,w=0.7):
    s={}
    for p,x in minmax(q['words']).items(): s[p]=s.get(p,0)+(1-w)*x
    for p,x in minmax(q['meaning']).items(): s[p]=s.get(p,0)+w*x
    return sorted(s,key=lambda p:(-s[p],p))
def rrf(q,k=60,w=0.5):
    s={}
    for i,(p,_) in enumerate(q['words']): s[p]=s.get(p,0)+(1-w)/(k+i+1)
    for i,(p,_) in enumerate(q['meaning']): s[p]=s.get(p,0)+w/(k+i+1)
    return sorted(s,key=lambda p:(-s[p],p))
def absolute(q,w=0.7,scale=None):
    # words: score / top word score scaled by top word score relative to a saturation; meaning: raw cosine
    s={}
    top=max((x for _,x in q['words']),default=1)
    for p,x in q['words']: s[p]=s.get(p,0)+(1-w)*(x/(x+scale))
    for p,x in q['meaning']: s[p]=s.get(p,0)+w*x
    return sorted(s,key=lambda p:(-s[p],p))
def cosmm(q,w=0.7):
    # meaning as raw cosine, words minmax
    s={}
    for p,x in minmax(q['words']).items(): s[p]=s.get(p,0)+(1-w)*x
    for p,x in q['meaning']: s[p]=s.get(p,0)+w*x
    return sorted(s,key=lambda p:(-s[p],p))
def ev(name,f):
    out=[]
    for st in ('dev','held_out'):
        qs=[q for q in Q if q['set']==st]
        r=[rank_of(f(q),q['answers']) for q in qs]
        out.append(f"{st} {sum(x<=5 for x in r)}/{len(qs)} mrr {sum(1/x for x in r)/len(qs):.3f}")
    print(f"{name:30}",*out)
ev('words',lambda q:[p for p,_ in q['words']])
ev('meaning',lambda q:[p for p,_ in q['meaning']])
for w in (0.5,0.6,0.7,0.8,0.9): ev(f'minmax w={w}',lambda q:current(q,w))
for k in (5,10,20,60):
  for w in (0.5,0.6,0.7,0.8): ev(f'rrf k={k} w={w}',lambda q:rrf(q,k,w))
for sc in (2,5,10,20):
  for w in (0.5,0.7,0.8,0.9): ev(f'sat s={sc} w={w}',lambda q:absolute(q,w,sc))
for w in (0.5,0.7,0.8,0.9): ev(f'cos+minmax w={w}',lambda q:cosmm(q,w))
def peaked(q,w=0.7,k=10,pw=1.0):
    s={}
    xs=q['words']
    if xs:
        top=xs[0][1]; kth=xs[min(k,len(xs))-1][1]
        peak=((top-kth)/top)**pw if top>0 else 0
        for p,x in minmax(xs).items(): s[p]=s.get(p,0)+(1-w)*peak*x
    for p,x in minmax(q['meaning']).items(): s[p]=s.get(p,0)+w*x
    return sorted(s,key=lambda p:(-s[p],p))
for k in (5,10,20):
  for w in (0.5,0.6,0.7):
    for pw in (0.5,1,2): ev(f'peaked k={k} w={w} pw={pw}',lambda q:peaked(q,w,k,pw))
def peaks(st):
    for q in Q:
        if q['set']!=st: continue
        xs=q['words']
        if xs: print(st, f"{(xs[0][1]-xs[min(10,len(xs))-1][1])/xs[0][1]:.2f}", q['q'])
peaks('dev')
