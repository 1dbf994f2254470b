"""A slow, obviously-correct scorer written straight from METRICS.md, for cross-checking.

Plain Python over a list of row dicts: no numpy, no code shared with oracleproto.scoring.
Returns {model: {metric: value or None}}.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict

CUTOFF = "skipped_training_cutoff"
ALPHA, BETA = 2.0, 0.5
GUARD = 1e-10
CLIP = 1e-3


def letters_of(text):
    return frozenset(ord(tok) - ord("A") for tok in text.replace(",", " ").split())


def exam(pred, gold):
    if pred is None or not pred <= gold:
        return 0.0
    return len(pred & gold) / len(gold)


def tversky(pred, gold):
    tp = len(pred & gold)
    if tp == 0:
        return 0.0
    return tp / (tp + ALPHA * len(pred - gold) + BETA * len(gold - pred))


def tversky_chance(k, m, single):
    if single:
        return 1 / k
    total = 0.0
    for tp in range(1, m + 1):
        for fp in range(0, k - m + 1):
            total += math.comb(m, tp) * math.comb(k - m, fp) * 2 ** (-k) * tp / (tp + ALPHA * fp + BETA * (m - tp))
    return total


def mean(values):
    values = list(values)
    return sum(values) / len(values) if values else None


def bucket_of(question):
    if question["question_type"] == "yes_no":
        return "yes_no"
    if question["question_type"] == "binary_named":
        return "binary_named"
    return "mc"


def binary_entropy(p):
    if p <= 0 or p >= 1:
        return 0.0
    return -(p * math.log2(p + GUARD) + (1 - p) * math.log2(1 - p + GUARD))


def fleiss_binary_one_row(sel, K):
    if sel == 0 or sel == K:
        return 1.0
    P = (sel**2 + (K - sel) ** 2 - K) / (K * (K - 1))
    Pe = (sel / K) ** 2 + (1 - sel / K) ** 2
    return (P - Pe) / (1 - Pe)


def abi(mean_abs):
    if mean_abs >= 0:
        return 100 * (1 - math.sqrt(mean_abs))
    return 100 * (1 + math.sqrt(-mean_abs))


def question_vector(trials, question, fallback):
    """Mean belief vector over eligible trials, and whether every vector was a fallback."""
    k = len(question["options"])
    vectors, kinds = [], []
    for t in trials:
        if t["error"] == CUTOFF:
            continue
        belief = t.get("belief")
        if belief is not None:
            vectors.append(list(belief))
            kinds.append("belief")
        elif fallback is not None and t["error"] is None and t["pred"] is not None:
            chosen = letters_of(t["pred"])
            if len(chosen) < k:
                vectors.append([1 - fallback if i in chosen else fallback / (k - len(chosen)) for i in range(k)])
                kinds.append("fallback")
    if not vectors:
        return None, None
    p = [sum(v[i] for v in vectors) / len(vectors) for i in range(k)]
    return p, all(kind == "fallback" for kind in kinds)


def score(rows, weights=None, fallback=None):
    weights = weights or {"yes_no": 0.15, "binary_named": 0.15, "mc": 0.70}
    by_model = defaultdict(lambda: defaultdict(list))
    questions = {}
    for r in rows:
        by_model[r["model"]][r["q_id"]].append(r)
        questions[r["q_id"]] = r
    vectors = {}  # (model, q) -> (p, all_fallback)
    for model, per_q in by_model.items():
        for q, trials in per_q.items():
            p, fb = question_vector(trials, questions[q], fallback)
            if p is not None:
                vectors[(model, q)] = (p, fb)
    return {model: score_model(model, per_q, questions, weights, vectors) for model, per_q in sorted(by_model.items())}


def score_model(model, per_q, questions, weights, vectors):
    out = {}
    eligible = [t for trials in per_q.values() for t in trials if t["error"] != CUTOFF]
    counted = [t for t in eligible if t["error"] is None]
    parsed = [t for t in counted if t["pred"] is not None]
    out["n_trials"] = len(counted)
    out["n_questions"] = len({t["q_id"] for t in counted})
    out["excluded_by_cutoff"] = sum(1 for trials in per_q.values() if all(t["error"] == CUTOFF for t in trials))
    n_el = len(eligible)
    out["validity_rate"] = len(parsed) / n_el if n_el else None
    out["parse_failure_rate"] = (len(counted) - len(parsed)) / n_el if n_el else None
    out["call_error_rate"] = (n_el - len(counted)) / n_el if n_el else None

    per_question = {}
    for q, trials in sorted(per_q.items()):
        question = questions[q]
        gold = letters_of(question["answer"])
        cnt = [t for t in trials if t["error"] is None]
        ok = [letters_of(t["pred"]) for t in cnt if t["pred"] is not None]
        cs = [1 if (t["pred"] is not None and letters_of(t["pred"]) == gold) else 0 for t in cnt]
        exams = [exam(letters_of(t["pred"]) if t["pred"] is not None else None, gold) for t in cnt]
        per_question[q] = dict(question=question, gold=gold, cnt=cnt, ok=ok, cs=cs, exams=exams,
                               eligible=[t for t in trials if t["error"] != CUTOFF])

    def bucket_exam(pred):
        values = [mean(d["exams"]) for d in per_question.values() if d["cnt"] and pred(d["question"])]
        return mean(values)

    out["exam_yes_no"] = bucket_exam(lambda q: bucket_of(q) == "yes_no")
    out["exam_binary_named"] = bucket_exam(lambda q: bucket_of(q) == "binary_named")
    out["exam_mc"] = bucket_exam(lambda q: bucket_of(q) == "mc")
    out["exam_mc_single"] = bucket_exam(lambda q: bucket_of(q) == "mc" and q["choice_type"] == "single")
    out["exam_mc_multi"] = bucket_exam(lambda q: bucket_of(q) == "mc" and q["choice_type"] == "multi")
    num = den = 0.0
    for b in ("yes_no", "binary_named", "mc"):
        if out[f"exam_{b}"] is not None:
            num += weights.get(b, 0.0) * out[f"exam_{b}"]
            den += weights.get(b, 0.0)
    out["composite_accuracy"] = num / den if den > 0 else None

    scored = [d for d in per_question.values() if d["cnt"]]
    out["pass1_avg"] = mean(mean(d["cs"]) for d in scored)
    out["pass_any_n"] = mean(1.0 if any(d["cs"]) else 0.0 for d in scored)
    out["pass_all_n"] = mean(1.0 if all(d["cs"]) else 0.0 for d in scored)

    wins = []
    for d in per_question.values():
        if not d["ok"]:
            continue
        counts = Counter(d["ok"]).most_common()
        if len(counts) > 1 and counts[0][1] == counts[1][1]:
            continue
        wins.append(1.0 if counts[0][0] == d["gold"] else 0.0)
    out["mv_acc"] = mean(wins)
    out["mv_gain"] = out["mv_acc"] - out["pass1_avg"] if out["mv_acc"] is not None and out["pass1_avg"] is not None else None

    # Cohen
    po_terms, pe_terms = [], []
    for d in per_question.values():
        k = len(d["question"]["options"])
        pe = 1 / k if d["question"]["choice_type"] == "single" else 0.5
        for c in d["cs"]:
            po_terms.append(c)
            pe_terms.append(pe)
    if po_terms:
        po, pe = mean(po_terms), mean(pe_terms)
        out["cohen_kappa"] = (po - pe) / (1 - pe) if pe != 1 else None
    else:
        out["cohen_kappa"] = None

    # Fleiss
    strata = defaultdict(list)  # k -> list of vote Counters
    multi_kappas = []
    n_single_q = n_multi_q = 0
    for d in per_question.values():
        if not d["eligible"]:
            continue
        k = len(d["question"]["options"])
        K = len(d["ok"])
        if d["question"]["choice_type"] == "single":
            n_single_q += 1
            if K >= 2:
                strata[k].append(Counter(min(s) for s in d["ok"]))
        else:
            n_multi_q += 1
            if K >= 2:
                multi_kappas.append(mean(fleiss_binary_one_row(sum(1 for s in d["ok"] if l in s), K) for l in range(k)))
    single_kappa = None
    if strata:
        total_q = 0
        acc = 0.0
        for k, votes in sorted(strata.items()):
            P = []
            column_totals = Counter()
            n_votes = 0
            for counter in votes:
                Ki = sum(counter.values())
                P.append((sum(v * v for v in counter.values()) - Ki) / (Ki * (Ki - 1)))
                column_totals.update(counter)
                n_votes += Ki
            Pbar = mean(P)
            Pe = sum((v / n_votes) ** 2 for v in column_totals.values())
            kappa = 1.0 if Pe == 1 else (Pbar - Pe) / (1 - Pe)
            acc += kappa * len(votes)
            total_q += len(votes)
        single_kappa = acc / total_q
    multi_kappa = mean(multi_kappas)
    pools = [(single_kappa, n_single_q), (multi_kappa, n_multi_q)]
    pools = [(kappa, w) for kappa, w in pools if kappa is not None]
    out["fleiss_kappa"] = sum(k * w for k, w in pools) / sum(w for _, w in pools) if pools and sum(w for _, w in pools) > 0 else None

    # Entropy, VCI
    entropies, vcis = [], []
    for d in per_question.values():
        K = len(d["ok"])
        if K < 2:
            continue
        k = len(d["question"]["options"])
        if d["question"]["choice_type"] == "single":
            votes = Counter(min(s) for s in d["ok"])
            entropies.append(-sum((n / K) * math.log2(n / K + GUARD) for n in votes.values()))
        else:
            entropies.append(mean(binary_entropy(sum(1 for s in d["ok"] if l in s) / K) for l in range(k)))
        vcis.append(Counter(d["ok"]).most_common(1)[0][1] / K)
    out["mean_entropy"] = mean(entropies)
    out["vci"] = mean(vcis)

    # FSS, Hamming
    skills, hammings = [], []
    for d in per_question.values():
        if not d["ok"]:
            continue
        q = d["question"]
        k, single = len(q["options"]), q["choice_type"] == "single"
        chance = tversky_chance(k, len(d["gold"]), single)
        tbar = mean(tversky(s, d["gold"]) for s in d["ok"])
        skills.append(0.0 if chance == 1 else (tbar - chance) / (1 - chance))
        if not single:
            hammings += [1 - len(s ^ d["gold"]) / k for s in d["ok"]]
    out["fss"] = mean(skills)
    out["hamming_mc_multi"] = mean(hammings)

    # Probabilistic
    rows_bs, rows_dec, rows_nll, rows_mbs, abs_uni, abs_crowd, fallbacks = [], [], [], [], [], [], []
    pairs = []
    for q in sorted(per_q):
        if (model, q) not in vectors:
            continue
        p, fb = vectors[(model, q)]
        fallbacks.append(1.0 if fb else 0.0)
        question = questions[q]
        k = len(question["options"])
        gold = letters_of(question["answer"])
        o = [1.0 if i in gold else 0.0 for i in range(k)]
        bs = sum((p[i] - o[i]) ** 2 for i in range(k)) / k
        rows_bs.append(bs)
        c = [min(max(x, CLIP), 1 - CLIP) for x in p]
        if question["choice_type"] == "single":
            g = min(gold)
            rows_dec.append(k * bs)
            rows_nll.append(-math.log(c[g]))
            rows_mbs.append(100 * (math.log2(c[g]) + 1))
        else:
            rows_nll.append(-sum(o[i] * math.log(c[i]) + (1 - o[i]) * math.log(1 - c[i]) for i in range(k)) / k)
        abs_uni.append(bs - sum((1 / k - o[i]) ** 2 for i in range(k)) / k)
        others = [vectors[(m, q)][0] for (m, qq) in vectors if qq == q and m != model]
        if others:
            crowd = [sum(v[i] for v in others) / len(others) for i in range(k)]
            abs_crowd.append(bs - sum((crowd[i] - o[i]) ** 2 for i in range(k)) / k)
        pairs += list(zip(p, o))
    if rows_bs:
        out["fallback_share"] = mean(fallbacks)
        out["brier_index"] = 100 * (1 - math.sqrt(mean(rows_bs)))
        out["brier_index_dec"] = 100 * (1 - math.sqrt(mean(rows_dec))) if rows_dec else None
        out["nll"] = mean(rows_nll)
        out["mbs"] = mean(rows_mbs)
        out["abi_uniform"] = abi(mean(abs_uni))
        out["abi_crowd"] = abi(mean(abs_crowd)) if abs_crowd else out["abi_uniform"]
        bins = defaultdict(list)
        for p_value, outcome in pairs:
            bins[min(int(math.floor(p_value * 10)), 9)].append((p_value, outcome))
        out["ece"] = sum(abs(mean(x for x, _ in b) - mean(y for _, y in b)) * len(b) for b in bins.values()) / len(pairs)
    else:
        for name in ("fallback_share", "brier_index", "brier_index_dec", "nll", "mbs", "abi_uniform", "abi_crowd", "ece"):
            out[name] = None

    # Cost
    all_rows = [t for trials in per_q.values() for t in trials]
    out["total_cost_usd"] = sum(t["cost_usd"] for t in all_rows)
    n = max(len(trials) for trials in per_q.values())
    comp = out["composite_accuracy"]
    out["per_correct_cost_usd"] = out["total_cost_usd"] / (out["n_questions"] * n * comp) if comp else None
    return out
