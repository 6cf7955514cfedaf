"""Small LOT-layout tables built from short original Chinese stories, for the audit tests.

Each story is a list of sentences; the builders make ClozeT, SenPos, PlotCom and OutGen rows
with the columns of schemas/lot.py and write them as parquet task folders.
"""

from __future__ import annotations

import pathlib

import pyarrow as pa
import pyarrow.parquet as pq

from schemas.lot import SCHEMAS

STORIES = [
    [
        "小明家门口有一棵很老的槐树。",
        "每年夏天，爷爷都会在树下给他讲故事。",
        "有一天，一场大风把槐树的一根粗枝吹断了。",
        "小明难过得哭了起来，因为他以为老树要死了。",
        "爷爷却笑着告诉他，所以明年春天树枝还会重新长出来。",
        "第二年春天，断枝旁边果然冒出了许多嫩芽。",
        "小明高兴地在树下跳了起来。",
    ],
    [
        "森林里住着一只骄傲的孔雀。",
        "它每天都站在湖边欣赏自己美丽的羽毛。",
        "虽然别的动物都想和它做朋友，但是它总是不理睬大家。",
        "一天傍晚，孔雀在回家的路上迷了路。",
        "天越来越黑，它害怕得发起抖来。",
        "这时候小松鼠提着灯笼找到了它，把它送回了家。",
        "从那以后，孔雀再也不骄傲了。",
    ],
    [
        "王奶奶在村口开了一家小面馆。",
        "她做的牛肉面又香又便宜，大家都喜欢来吃。",
        "有一年冬天，村里下了很大的雪，路都被封住了。",
        "王奶奶担心住在山上的护林员没有饭吃。",
        "于是她背着一锅热面，一步一步爬上了山。",
        "护林员吃着热乎乎的面条，感动得说不出话来。",
        "后来，护林员每年都会下山帮王奶奶劈柴。",
    ],
    [
        "有个年轻人想学射箭，就去拜一位老猎人为师。",
        "老猎人让他先练习盯着一根针看，一看就是三个月。",
        "年轻人觉得很无聊，几次都想放弃。",
        "如果不是想到家里的老母亲，他早就回家了。",
        "三个月以后，那根针在他眼里变得像碗口一样大。",
        "老猎人这才把弓交给他，让他开始射箭。",
        "没过多久，他就成了村里最好的猎手。",
    ],
    [
        "小兔子在草地上捡到了一个红色的风筝。",
        "它想把风筝放上天，可是怎么也飞不起来。",
        "小鸟看见了，告诉它要逆着风跑。",
        "小兔子照着小鸟的话去做，风筝果然慢慢升了起来。",
        "风筝越飞越高，一直飞到了白云旁边。",
        "突然线断了，风筝飘到了河对岸。",
        "小兔子和小鸟一起过河，终于把风筝找了回来。",
    ],
    [
        "李叔叔是一名邮递员，每天骑着自行车送信。",
        "山里的路很难走，他的车胎经常被石头扎破。",
        "尽管工作很辛苦，可是他从来没有送错过一封信。",
        "有一次，一封信上的地址被雨水泡得看不清了。",
        "李叔叔挨家挨户地打听，问了整整一个下午。",
        "最后他找到了收信的老人，原来那是她儿子从远方寄来的信。",
        "老人拉着李叔叔的手，一遍又一遍地说谢谢。",
    ],
    [
        "一只乌鸦口渴了，到处找水喝。",
        "它看见地上有一个瓶子，瓶子里只有一点点水。",
        "乌鸦把嘴伸进瓶口，可是怎么也喝不着。",
        "它想了想，开始一颗一颗地往瓶子里衔小石子。",
        "瓶子里的水慢慢升高了。",
        "最后乌鸦终于喝到了清凉的水。",
        "它高兴地拍着翅膀飞走了。",
    ],
    [
        "小红第一次学做饭，想给妈妈一个惊喜。",
        "她把米淘了三遍，又小心地放进了锅里。",
        "因为忘了加水，所以锅里很快冒出了黑烟。",
        "小红吓坏了，连忙关掉了火。",
        "妈妈回到家，看见厨房里乱七八糟的。",
        "她没有批评小红，而是耐心地教她怎样煮饭。",
        "那天晚上，她们一起吃了一顿香喷喷的晚饭。",
    ],
    [
        "老木匠的手艺在镇上远近闻名。",
        "他做的桌椅结实耐用，用上几十年都不会坏。",
        "有个商人想请他做一批便宜的家具，赚一笔快钱。",
        "老木匠摇摇头说，只要是他做的东西，就一定要用好木头。",
        "商人生气地走了，去找了别的木匠。",
        "几年后，商人卖出去的家具全都散了架，再也没人买他的东西。",
        "而老木匠的铺子前，依旧每天都排着长队。",
    ],
    [
        "山脚下有一条清澈的小溪。",
        "小鱼们每天在溪水里快乐地游来游去。",
        "后来有人在上游建了一座工厂，溪水变得又黑又臭。",
        "小鱼们一条接一条地生病了。",
        "村里的孩子们发现了这件事，一起给镇长写了一封信。",
        "镇长看了信，很快让工厂停止往小溪里排脏水。",
        "过了一年，溪水又变清了，小鱼们也回来了。",
    ],
]
TITLES = [
    "老槐树",
    "骄傲的孔雀",
    "王奶奶的面馆",
    "学射箭",
    "红风筝",
    "邮递员",
    "乌鸦喝水",
    "第一次做饭",
    "老木匠",
    "小溪",
]


def _base(task: str, i: int, split: str) -> dict:
    return {"example_id": f"{task}-{i:02d}", "story_id": f"story-{i:02d}", "split": split}


def clozet_row(i: int, split: str, wrong: str = "他们吵了一架，谁也不理谁。", right_index: int = 1) -> dict:
    """The removed sentence is the second-to-last; `right_index` says which candidate is right."""
    s = STORIES[i]
    story = "".join(s[:-2]) + "<mask>" + s[-1]
    plots = [wrong, s[-2]] if right_index == 1 else [s[-2], wrong]
    return {
        **_base("clozet", i, split),
        "story": story,
        "plot0": plots[0],
        "plot1": plots[1],
        "label": str(right_index),
        "right_index": right_index,
        "annotator": "t",
    }


def senpos_row(i: int, split: str, removed: int = 3) -> dict:
    """Remove sentence `removed`; a [MASK] between every two remaining sentences."""
    s = STORIES[i]
    rest = s[:removed] + s[removed + 1 :]
    story = rest[0] + "".join("[MASK]" + t for t in rest[1:])
    return {
        **_base("senpos", i, split),
        "story": story,
        "sentence": s[removed],
        "label": removed,
        "n_candidates": len(rest) - 1,
        "removed_index": removed,
        "reviewed": False,
    }


def plotcom_row(i: int, split: str, removed: int = 2) -> dict:
    s = STORIES[i]
    story = "".join(s[:removed]) + "<MASK>" + "".join(s[removed + 1 :])
    return {
        **_base("plotcom", i, split),
        "story": story,
        "plot": s[removed],
        "removed_index": removed,
        "origin": "auto",
    }


def outgen_row(i: int, split: str) -> dict:
    s = STORIES[i]
    outline = [t[:6] for t in s[1:5]]
    return {
        **_base("outgen", i, split),
        "title": TITLES[i],
        "outline": outline,
        "story": "".join(s),
        "outline_source": "rake",
        "title_source": "input",
    }


BUILDERS = {"clozet": clozet_row, "senpos": senpos_row, "plotcom": plotcom_row, "outgen": outgen_row}


def write_task(root: pathlib.Path, task: str, rows: list[dict], name: str = "part-0.parquet") -> None:
    folder = root / task
    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=SCHEMAS[task]), folder / name)


def write_lot(root: pathlib.Path, splits: dict[str, list[int]]) -> dict[str, list[dict]]:
    """Write all four task folders; `splits` maps split -> story indices. Returns the rows."""
    out = {}
    for task, build in BUILDERS.items():
        rows = [build(i, split) for split, idx in splits.items() for i in idx]
        write_task(root, task, rows)
        out[task] = rows
    return out
