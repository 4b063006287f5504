"""Fits the suggestion reranker (apps/api/src/suggest/abstain.ts RERANK, TASK_PRIOR, ABSTAIN_BELOW) by
cross-validation, and reports every figure on messages the fit did not see.

Input: the file `npm run bench -- suggest --explain <file>` writes (one message a line: its task evidence
and its reranked candidates with their evidence and whether each is relevant). The reranker is a logistic
regression over the candidates' evidence (label: the skill helps), so its output is already a calibrated
probability; the abstention rule (the task prior when the message asks for nothing, and the threshold) is
chosen on the training folds (most abstention on kind none with false abstention at most MAX_FALSE there).
K-fold over messages (message i in fold i mod K): the printed figures are out-of-fold, i.e. held out. The
weights to ship are then fitted on every message (printed last, as TypeScript).

Usage: python3 bench/suggest/fit-rerank.py explain.jsonl [features...]   (numpy)
"""
import json, math, sys
import numpy as np

K = 5
LISTWISE = True
L2 = 1.0
MAX_FALSE = 0.03
ALL_FEATURES = ["coverage", "topical", "topicalIdf", "allIdf", "fused", "agreement", "dense", "nameCovered",
                "descriptionCovered", "lexicalRank", "semanticRank", "lsaRank", "stars"]
LOG = {"topicalIdf", "allIdf"}  # fed as log(1 + x), as abstain.ts does

def vec(c, feats):
    return [math.log1p(c[f]) if f in LOG else float(c[f]) for f in feats]

def fit_listwise(ms, feats, l2=L2):
    """Ranking weights: softmax over each message's candidates, the relevant ones as the target (ListNet)."""
    from scipy.optimize import minimize
    data = []
    for m in ms:
        if not m["candidates"] or not any(c["relevant"] for c in m["candidates"]):
            continue
        X = np.array([vec(c, feats) for c in m["candidates"]])
        y = np.array([1.0 if c["relevant"] else 0.0 for c in m["candidates"]])
        data.append((X, y / y.sum()))
    d = len(feats)
    def loss(w):
        total = 0.5 * l2 * w @ w
        g = l2 * w
        for X, y in data:
            z = X @ w
            z -= z.max()
            e = np.exp(z)
            p = e / e.sum()
            total -= y @ np.log(p + 1e-300)
            g += X.T @ (p - y)
        return total, g
    return minimize(loss, np.zeros(d), jac=True, method="L-BFGS-B").x

def platt(ms, feats, wr):
    """Calibration of the ranking value into the probability that the skill helps (logistic on it)."""
    X = np.array([[float(np.dot(vec(c, feats), wr))] for m in ms for c in m["candidates"]])
    y = np.array([1.0 if c["relevant"] else 0.0 for m in ms for c in m["candidates"]])
    a = fit(X, y, l2=1e-6)
    return np.concatenate([a[0] * wr, [a[1]]])

def fit(X, y, l2=L2, iters=300):
    """Logistic regression by Newton's method (L2 on the weights, not the bias)."""
    n, d = X.shape
    A = np.hstack([X, np.ones((n, 1))])
    w = np.zeros(d + 1)
    reg = np.full(d + 1, l2); reg[-1] = 0
    for _ in range(iters):
        p = 1 / (1 + np.exp(-A @ w))
        g = A.T @ (p - y) + reg * w
        H = (A * (p * (1 - p))[:, None]).T @ A + np.diag(reg + 1e-9)
        step = np.linalg.solve(H, g)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w

def probs(w, m, feats):
    if not m["candidates"]:
        return np.array([])
    X = np.array([vec(c, feats) for c in m["candidates"]])
    return 1 / (1 + np.exp(-(X @ w[:-1] + w[-1])))

def prior(m, no_request):
    t = m.get("task")
    if not t or t["smallTalk"] or t["informative"] == 0:
        return 0.0
    return 1.0 if t["request"] else no_request

def best(m, w, feats, no_request):
    p = probs(w, m, feats)
    return (p.max() if len(p) else 0.0) * prior(m, no_request)

def rates(ms, w, feats, no_request, t):
    none = [m for m in ms if m["kind"] == "none"]
    others = [m for m in ms if m["kind"] != "none"]
    below = lambda m: best(m, w, feats, no_request) < t
    return (sum(map(below, none)) / max(1, len(none)), sum(map(below, others)) / max(1, len(others)))

def choose_abstention(ms, w, feats):
    grid = [(p / 10, t / 100) for p in range(2, 11) for t in range(2, 61)]
    ok = []
    for p, t in grid:
        none, false = rates(ms, w, feats, p, t)
        if false <= MAX_FALSE:
            ok.append((none, -false, -t, p, t))
    _, _, _, p, t = max(ok)
    return p, t

def train(ms, feats):
    X = np.array([vec(c, feats) for m in ms for c in m["candidates"]])
    y = np.array([1.0 if c["relevant"] else 0.0 for m in ms for c in m["candidates"]])
    w = platt(ms, feats, fit_listwise(ms, feats)) if LISTWISE else fit(X, y)
    p, t = choose_abstention(ms, w, feats)
    return w, p, t

def evaluate(pairs):
    """pairs: (message, w, feats, p, t) on held-out messages -> success@1, any-relevant@5, abstention."""
    ans = [(m, w, f, p, t) for m, w, f, p, t in pairs if m["kind"] != "none"]
    none = [(m, w, f, p, t) for m, w, f, p, t in pairs if m["kind"] == "none"]
    s1 = r5 = false = 0
    for m, w, f, p, t in ans:
        pr = probs(w, m, f)
        abst = best(m, w, f, p) < t
        false += abst
        if abst or not len(pr):
            continue
        order = np.argsort(-pr, kind="stable")
        s1 += m["candidates"][order[0]]["relevant"]
        r5 += any(m["candidates"][i]["relevant"] for i in order[:5])
    abst_none = sum(best(m, w, f, p) < t for m, w, f, p, t in none)
    n = max(1, len(ans))
    return {"success@1": round(s1 / n, 3), "any@5": round(r5 / n, 3), "false": round(false / n, 3),
            "none": round(abst_none / max(1, len(none)), 3)}

def cross_validate(ms, feats):
    pairs = []
    by_kind = {}
    for k in range(K):
        tr = [m for i, m in enumerate(ms) if i % K != k]
        te = [m for i, m in enumerate(ms) if i % K == k]
        w, p, t = train(tr, feats)
        pairs += [(m, w, feats, p, t) for m in te]
    out = {"all": evaluate(pairs)}
    for kind in ["direct", "indirect", "multi"]:
        out[kind] = evaluate([x for x in pairs if x[0]["kind"] == kind])
    return out

if __name__ == "__main__":
    ms = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
    feats = sys.argv[2].split(",") if len(sys.argv) > 2 else ALL_FEATURES
    print("features", feats)
    print("out-of-fold", json.dumps(cross_validate(ms, feats)))
    w, p, t = train(ms, feats)
    print("fitted on all: no-request prior", p, "threshold", t)
    print("curve (threshold: abstention on none / false abstention), fitted on all:")
    for tt in [0.02, 0.05, 0.08, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4]:
        none, false = rates(ms, w, feats, p, tt)
        print(f"  {tt}: {none:.3f} / {false:.3f}")
    print("export const RERANK = {")
    for f, v in zip(feats, w[:-1]):
        print(f"  {f}: {v:.4f},")
    print(f"  bias: {w[-1]:.4f},\n}} as const;")
