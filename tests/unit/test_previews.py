"""The prompt previews compare lists its flipped prompts by: what the prompt asks."""

from __future__ import annotations

from rollouts.store.index import StepIndex
from rollouts.store.previews import prompt_previews

PAD = "<|image_pad|>" * 50
CHAT = (
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
    "<|im_start|>user\nFirst question<|im_end|>\n<|im_start|>assistant\nok<|im_end|>\n"
    "<|im_start|>user\nWhat is   6\nx 7?<|im_end|>\n<|im_start|>assistant\n"
)


def test_a_prompt_is_previewed_by_its_last_user_turn(write_step):
    path = write_step(
        "train",
        1,
        [
            {"prompt": CHAT},
            {
                "prompt": [
                    {"role": "system", "content": "S"},
                    {"role": "user", "content": "Hi 你好"},
                ]
            },
            {"prompt": f"<|im_start|>user\n<|vision_start|>{PAD}<|vision_end|>The figure?"},
            {"prompt": "plain text, no turns " + "x" * 200},
            {"response": "no prompt here"},
            "{not json\n",
        ],
    )
    got = prompt_previews(StepIndex.build(path, "train/1.jsonl"), range(6), chars=30)
    assert got == {
        0: "What is 6 x 7?",
        1: "Hi 你好",
        2: "[image] The figure?",
        3: "plain text, no turns " + "x" * 8 + "\u2026",
        4: None,
        5: None,
    }
