"""node_search latency and index size on Chinese digest nodes, for each CJK cut.

    .venv/bin/python -m bench.bench_cjk_search           # 10,000 nodes, the product's cut
    .venv/bin/python -m bench.bench_cjk_search --cut none --nodes 2000

``bench_scale --only-search`` measures English nodes, whose FTS5 text the CJK cut leaves
as it was. Chinese text is where the cut costs: a run of n characters becomes n - 1
search words in the index, and a query's pairs each match many nodes. This writes
synthetic Chinese nodes (sentences from word lists, fixed seed, as ``bench_index`` does
in English), embeds them with hash vectors (``bench_scale.HashVectors``: the query is
still embedded by MiniLM), and reports node_search p50/p95 wall and CPU per query for
queries shaped as the dream asks (``name: summary``) and short ones, and the size of the
FTS5 table. ``--cut`` swaps the cut (``bench.quality.cjk_cuts``).
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import tempfile
import time
from pathlib import Path

from bench.bench_scale import HashVectors, load, percentiles
from bench.quality.cjk_cuts import CUTS, use_cut

ADJ = ("缓慢 快速 混合 手动 每晚 损坏 每周 共享 本地 远程 安静 嘈杂 大型 小型 增量 部分 完整 "
       "私有 公开 紧急 次要 关键 便宜 昂贵 稳定 旧的 新的 谨慎").split()
NOUN = ("索引 缓存 查询 向量 表格 备份 部署 发布 预算 会议 评审 花园 食谱 旅程 论文 摘要 草稿 "
        "问题 服务器 集群 流水线 模式 迁移 令牌 嵌入 内存 习惯 睡眠 咖啡 自行车 发票 合同 租约 "
        "医生 保险 税务 护照 航班 酒店 音乐会 小说 播客 讲座 考试 论文 数据库 副本 分片 延迟 "
        "吞吐量 故障 告警 仪表盘 指标 功能 开关 上线 回滚 冲刺 路线图 招聘 入职 导师 工资 奖金 "
        "假期 公寓 厨房 阳台 番茄 罗勒").split()
VERB = ("重建 破坏 拖慢 修复 替换 记录 解释 测量 安排 阻塞 改进 加倍 减半 推迟 触发 监控 清理 "
        "迁移 审查 批准 拒绝").split()
PEOPLE = "小明 王芳 李娜 张伟 刘洋 陈静 杨磊 赵敏 黄强 周杰".split()


def sentence(rng: random.Random) -> str:
    """One Chinese sentence of 7-16 words, written without spaces."""
    parts = [rng.choice(PEOPLE), "说", rng.choice(ADJ), "的", rng.choice(NOUN), rng.choice(VERB),
             "了", rng.choice(NOUN)]
    if rng.random() < 0.6:
        parts += ["，因为", rng.choice(ADJ), "的", rng.choice(NOUN), rng.choice(VERB), "它"]
    if rng.random() < 0.4:
        parts += ["，在", rng.choice(NOUN), rng.choice(NOUN), "期间"]
    return "".join(parts) + "。"


def make_nodes(root: Path, count: int, seed: int) -> list[str]:
    """Write ``count`` nodes; returns their ``name: description`` queries."""
    rng = random.Random(seed)
    queries = []
    for i in range(count):
        name = f"{rng.choice(ADJ)}{rng.choice(NOUN)}{rng.choice(NOUN)}"
        description = sentence(rng)
        body = "".join(sentence(rng) for _ in range(rng.randint(3, 12)))
        path = root / "digest" / "wiki" / f"node-{i}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\nname: {name}\ndescription: {description}\n---\n{body}\n",
                        encoding="utf-8")
        queries.append(f"{name}: {description}")
    return queries


def main(argv: list[str] | None = None) -> int:
    """Build the index, then time queries."""
    parser = argparse.ArgumentParser(prog="python -m bench.bench_cjk_search",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--cut", choices=sorted(CUTS), default="bigram")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    use_cut(args.cut)
    from vaultlink.index.embed import MiniLMEmbedder
    from vaultlink.index.recall import open_indexes
    from vaultlink.vault.notes import Vault

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        queries = make_nodes(root, args.nodes, args.seed)
        indexes = open_indexes(Vault(root), HashVectors())
        try:
            t0 = time.perf_counter()
            indexes.nodes.sync()
            built = time.perf_counter() - t0
            indexes.nodes.embedder = MiniLMEmbedder()
            rng = random.Random(args.seed)
            dream = rng.sample(queries, 200)
            short = ["".join(rng.choice(NOUN) for _ in range(rng.randint(1, 3)))
                     for _ in range(200)]
            print(f"cut {args.cut}, {args.nodes} Chinese nodes, built in {built:.1f} s "
                  f"({load()})")
            for label, qs in (("name: summary", dream), ("1-3 words", short)):
                p50, p95, cpu = percentiles(lambda q: indexes.nodes.node_search(q, 20), qs)
                print(f"  node_search, {label:<14} p50 {p50:.1f} ms, p95 {p95:.1f} ms wall; "
                      f"{cpu:.1f} ms CPU per query ({load()})")
        finally:
            indexes.close()
        db = sqlite3.connect(Path(root) / ".vaultlink" / "state.sqlite")
        pages = sum(r[0] for r in db.execute(
            "SELECT count(*) FROM dbstat WHERE name LIKE 'idx_nodes_fts%'"))
        size = db.execute("PRAGMA page_size").fetchone()[0] * pages
        db.close()
        print(f"  FTS5 tables of the node index: {size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
