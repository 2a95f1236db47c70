"""rollouts.presentation.render: chat turns, tagged blocks, special tokens and pad runs, as data."""

from __future__ import annotations

import random
import re

import pytest

from rollouts.presentation.render import (
    Block,
    Rendered,
    Span,
    Turn,
    compile_mask,
    reconstruct,
    render_messages,
    render_text,
    render_value,
)

PADS = compile_mask(r"<\|image_pad\|>|<\|imgpad\|>|<\|audio_comp_pad\|>")


def only_turn(rendered: Rendered) -> Turn:
    assert len(rendered.turns) == 1
    return rendered.turns[0]


def text_block(text: str) -> Block:
    return Block("text", (Span("text", text),))


# Turns -------------------------------------------------------------------------------------


def test_chat_text_splits_into_turns_by_role_with_exact_markers() -> None:
    text = "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>"
    rendered = render_text(text, PADS)
    assert rendered.chat is True
    assert rendered.raw == text
    assert rendered.turns == (
        Turn("system", (text_block("Be brief."),), "<|im_start|>system\n", "<|im_end|>"),
        Turn(None, (text_block("\n"),)),
        Turn("user", (text_block("Hi"),), "<|im_start|>user\n", "<|im_end|>"),
    )


def test_whitespace_between_turns_is_kept_as_blank_roleless_turn() -> None:
    rendered = render_text("<|im_start|>user\nA<|im_end|>\n\n<|im_start|>user\nB<|im_end|>", None)
    between = rendered.turns[1]
    assert between.role is None
    assert between.is_blank
    assert between.blocks[0].text == "\n\n"
    assert not rendered.turns[0].is_blank


def test_generation_prompt_at_end_is_an_unclosed_assistant_turn() -> None:
    rendered = render_text("<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n", None)
    last = rendered.turns[-1]
    assert last == Turn("assistant", (), "<|im_start|>assistant\n", None)
    assert not last.is_blank  # a turn with a role is shown even when empty


def test_turn_started_before_previous_closed_leaves_previous_unclosed() -> None:
    rendered = render_text("<|im_start|>user\nQ<|im_start|>assistant\nA<|im_end|>", None)
    assert [(t.role, t.end_marker) for t in rendered.turns] == [
        ("user", None),
        ("assistant", "<|im_end|>"),
    ]


def test_start_marker_without_newline_is_tolerated() -> None:
    turn = only_turn(render_text("<|im_start|>tool<tool_response>ok</tool_response>", None))
    assert turn.role == "tool"
    assert turn.start_marker == "<|im_start|>tool"
    assert turn.blocks == (Block("tool_response", (Span("text", "ok"),), True, True),)


def test_unknown_role_is_kept_verbatim() -> None:
    turn = only_turn(render_text("<|im_start|>critic\nmeh<|im_end|>", None))
    assert turn.role == "critic"


def test_text_before_and_after_turns_is_roleless() -> None:
    rendered = render_text("pre<|im_start|>user\nx<|im_end|>post", None)
    assert [(t.role, t.blocks[0].text) for t in rendered.turns] == [
        (None, "pre"),
        ("user", "x"),
        (None, "post"),
    ]


def test_text_without_chat_markers_is_one_roleless_turn() -> None:
    rendered = render_text("The answer is 4.", PADS)
    assert rendered.chat is False
    assert rendered.turns == (Turn(None, (text_block("The answer is 4."),)),)


def test_stray_im_end_outside_turn_is_a_special_token() -> None:
    turn = only_turn(render_text("done<|im_end|>", None))
    assert turn.role is None
    assert turn.blocks[0].spans == (Span("text", "done"), Span("special", "<|im_end|>"))


def test_empty_string_renders_one_blank_turn() -> None:
    rendered = render_text("", PADS)
    assert rendered.turns == (Turn(None, ()),)
    assert rendered.turns[0].is_blank
    assert rendered.chat is False
    assert reconstruct(rendered) == ""


# Blocks ------------------------------------------------------------------------------------


def test_closed_think_then_answer_text() -> None:
    turn = only_turn(render_text("<think>add</think>\n4", None))
    assert turn.blocks == (
        Block("think", (Span("text", "add"),), opened=True, closed=True),
        text_block("\n4"),
    )


def test_response_holding_only_closing_think_is_a_think_block() -> None:
    turn = only_turn(render_text("</think>", None))
    assert turn.blocks == (Block("think", (), opened=False, closed=True),)
    assert not turn.is_blank  # the tag is content a reader must see


def test_response_starting_inside_reasoning_is_think_then_text() -> None:
    turn = only_turn(render_text("2 plus 2...</think>\n\nThe answer is 4.", None))
    assert turn.blocks == (
        Block("think", (Span("text", "2 plus 2..."),), opened=False, closed=True),
        text_block("\n\nThe answer is 4."),
    )


def test_orphan_closing_think_claims_tags_quoted_in_the_reasoning() -> None:
    text = 'I will call <tool_call>{"name": "f"}</tool_call> now</think>ok'
    turn = only_turn(render_text(text, None))
    assert [(b.kind, b.opened, b.closed) for b in turn.blocks] == [
        ("think", False, True),
        ("text", False, False),
    ]
    assert turn.blocks[0].text == 'I will call <tool_call>{"name": "f"}</tool_call> now'


def test_orphan_closing_rule_applies_to_other_tags() -> None:
    turn = only_turn(render_text("42</answer>", None))
    assert turn.blocks == (Block("answer", (Span("text", "42"),), opened=False, closed=True),)


def test_unclosed_think_runs_to_end_of_turn() -> None:
    rendered = render_text("<|im_start|>assistant\n<think>hmm, so<|im_end|>\n", None)
    assert rendered.turns[0].blocks == (
        Block("think", (Span("text", "hmm, so"),), opened=True, closed=False),
    )
    assert rendered.turns[0].end_marker == "<|im_end|>"


def test_generation_prompt_ending_in_think_is_an_open_think_block() -> None:
    turn = render_text("<|im_start|>assistant\n<think>\n", None).turns[-1]
    assert turn.blocks == (Block("think", (Span("text", "\n"),), opened=True, closed=False),)


def test_blocks_do_not_nest() -> None:
    turn = only_turn(render_text("<think>maybe <answer>3</answer></think>", None))
    assert len(turn.blocks) == 1
    assert turn.blocks[0].kind == "think"
    assert turn.blocks[0].text == "maybe <answer>3</answer>"


def test_stray_closing_tag_after_a_block_stays_text() -> None:
    turn = only_turn(render_text("<think>a</think> b </think>", None))
    assert turn.blocks[1] == text_block(" b </think>")


def test_tool_call_json_is_pretty_printed() -> None:
    body = '\n{"name": "search", "arguments": {"q": "café"}}\n'
    turn = only_turn(render_text(f"<tool_call>{body}</tool_call>", None))
    block = turn.blocks[0]
    assert block.kind == "tool_call"
    assert block.text == body
    assert block.pretty == '{\n  "name": "search",\n  "arguments": {\n    "q": "café"\n  }\n}'


def test_tool_call_with_invalid_json_has_no_pretty_form_and_keeps_text() -> None:
    body = '{"name": "search", "arguments": {'
    turn = only_turn(render_text(f"<tool_call>{body}</tool_call>", None))
    assert turn.blocks[0].pretty is None
    assert turn.blocks[0].text == body


def test_tool_call_with_absurd_nesting_does_not_raise() -> None:
    body = "[" * 100_000
    turn = only_turn(render_text(f"<tool_call>{body}</tool_call>", None))
    assert turn.blocks[0].pretty is None


def test_only_tool_call_blocks_get_a_pretty_form() -> None:
    turn = only_turn(render_text('<answer>{"a": 1}</answer>', None))
    assert turn.blocks[0].pretty is None


def test_tools_tool_response_and_answer_blocks() -> None:
    text = (
        "<|im_start|>system\n<tools>[]</tools><|im_end|>"
        "<|im_start|>tool\n<tool_response>sunny</tool_response><|im_end|>"
        "<|im_start|>assistant\n<answer>bring no umbrella</answer><|im_end|>"
    )
    blocks = [turn.blocks for turn in render_text(text, None).turns]
    assert blocks == [
        (Block("tools", (Span("text", "[]"),), True, True),),
        (Block("tool_response", (Span("text", "sunny"),), True, True),),
        (Block("answer", (Span("text", "bring no umbrella"),), True, True),),
    ]


# Spans -------------------------------------------------------------------------------------


def test_special_tokens_are_their_own_spans() -> None:
    turn = only_turn(render_text("a<|vision_start|><|vision_end|>b<|endoftext|>", PADS))
    assert turn.blocks[0].spans == (
        Span("text", "a"),
        Span("special", "<|vision_start|>"),
        Span("special", "<|vision_end|>"),
        Span("text", "b"),
        Span("special", "<|endoftext|>"),
    )


def test_pipe_brackets_in_prose_are_not_special_tokens() -> None:
    text = "x <| y |> and <|a b|> and <||>"
    turn = only_turn(render_text(text, PADS))
    assert turn.blocks[0].spans == (Span("text", text),)


def test_run_of_256_image_pads_collapses_to_one_span_with_count() -> None:
    text = "<|vision_start|>" + "<|image_pad|>" * 256 + "<|vision_end|>What is shown?"
    turn = only_turn(render_text(text, PADS))
    assert turn.blocks[0].spans == (
        Span("special", "<|vision_start|>"),
        Span("pad", "<|image_pad|>", 256),
        Span("special", "<|vision_end|>"),
        Span("text", "What is shown?"),
    )
    assert turn.blocks[0].text == text


def test_different_pad_tokens_adjacent_are_separate_runs() -> None:
    text = "<|image_pad|>" * 3 + "<|audio_comp_pad|>" * 2 + "<|image_pad|>"
    turn = only_turn(render_text(text, PADS))
    assert turn.blocks[0].spans == (
        Span("pad", "<|image_pad|>", 3),
        Span("pad", "<|audio_comp_pad|>", 2),
        Span("pad", "<|image_pad|>", 1),
    )


def test_pads_separated_by_text_are_separate_runs() -> None:
    turn = only_turn(render_text("<|imgpad|><|imgpad|> <|imgpad|>", PADS))
    assert turn.blocks[0].spans == (
        Span("pad", "<|imgpad|>", 2),
        Span("text", " "),
        Span("pad", "<|imgpad|>", 1),
    )


def test_pads_inside_a_block_are_collapsed_too() -> None:
    text = "<tool_response>" + "<|image_pad|>" * 4 + "</tool_response>"
    turn = only_turn(render_text(text, PADS))
    assert turn.blocks[0].spans == (Span("pad", "<|image_pad|>", 4),)


def test_without_mask_pads_are_plain_special_tokens_one_per_span() -> None:
    turn = only_turn(render_text("<|image_pad|>" * 3, None))
    assert turn.blocks[0].spans == (Span("special", "<|image_pad|>"),) * 3


def test_custom_mask_pattern_collapses_what_it_matches() -> None:
    turn = only_turn(render_text("a....b<|image_pad|>", compile_mask(r"\.")))
    assert turn.blocks[0].spans == (
        Span("text", "a"),
        Span("pad", ".", 4),
        Span("text", "b"),
        Span("special", "<|image_pad|>"),
    )


def test_zero_length_mask_matches_are_ignored() -> None:
    text = "ab<|image_pad|>"
    turn = only_turn(render_text(text, compile_mask(r"x*")))
    assert turn.blocks[0].spans == (Span("text", "ab"), Span("special", "<|image_pad|>"))


def test_compile_mask_treats_empty_or_none_as_off() -> None:
    assert compile_mask("") is None
    assert compile_mask(None) is None


def test_compile_mask_caches_compiled_patterns() -> None:
    assert compile_mask(r"<\|x\|>") is compile_mask(r"<\|x\|>")


def test_compile_mask_raises_on_bad_regex() -> None:
    with pytest.raises(re.error):
        compile_mask("(unclosed")


# Hostile and unusual text -------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        '"><svg onload=alert(1)>',
        "&lt;b&gt; & \u0000 \u202e",
    ],
)
def test_hostile_text_comes_through_unescaped_as_text(text: str) -> None:
    turn = only_turn(render_text(text, PADS))
    assert turn.blocks == (text_block(text),)


def test_unicode_text_and_roles_are_preserved() -> None:
    text = "<|im_start|>usér\n数学 🙂 \\boxed{204}<|im_end|>"
    turn = only_turn(render_text(text, PADS))
    assert turn.role == "usér"
    assert turn.blocks == (text_block("数学 🙂 \\boxed{204}"),)


# Messages ----------------------------------------------------------------------------------


def test_messages_with_string_content_become_turns_without_markers() -> None:
    rendered = render_messages(
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "<think>x"}],
        None,
    )
    assert rendered.chat is True
    assert rendered.turns == (
        Turn("system", (text_block("Be brief."),)),
        Turn("user", (Block("think", (Span("text", "x"),), opened=True),)),
    )
    assert rendered.raw == "system:\nBe brief.\n\nuser:\n<think>x"


def test_messages_with_list_of_parts_label_non_text_parts() -> None:
    content = [
        {"type": "image", "image": "file:///a.png"},
        {"type": "text", "text": "What is "},
        {"type": "text", "text": "this?<|endoftext|>"},
        {"type": "audio"},
    ]
    rendered = render_messages([{"role": "user", "content": content}], PADS)
    assert rendered.turns[0].blocks == (
        Block(
            "text",
            (
                Span("special", "[image]"),
                Span("text", "What is this?"),
                Span("special", "<|endoftext|>"),
                Span("special", "[audio]"),
            ),
        ),
    )
    assert rendered.raw == "user:\n[image]What is this?<|endoftext|>[audio]"


def test_empty_message_is_a_turn_but_not_blank() -> None:
    rendered = render_messages([{"role": "assistant", "content": ""}], None)
    assert rendered.turns == (Turn("assistant", ()),)
    assert not rendered.turns[0].is_blank


def test_messages_with_odd_items_do_not_raise() -> None:
    messages = [
        "bare string",
        {"role": 7, "content": None},
        {"content": {"k": "v"}},
        {"role": "user", "content": [3, {"no_type": 1}, "plain"]},
        None,
    ]
    rendered = render_messages(messages, None)
    assert [t.role for t in rendered.turns] == [None, "7", None, "user", None]
    assert rendered.turns[0].blocks == (text_block("bare string"),)
    assert rendered.turns[1].blocks == ()
    assert rendered.turns[2].blocks == (text_block('{"k": "v"}'),)
    assert rendered.turns[3].blocks == (
        Block("text", (Span("special", "[int]"), Span("special", "[dict]"), Span("text", "plain"))),
    )
    assert rendered.turns[4].blocks == ()


# Dispatch ----------------------------------------------------------------------------------


def test_render_value_renders_strings_as_text() -> None:
    rendered = render_value("<think>r</think>", None)
    assert rendered is not None
    assert rendered.turns[0].blocks[0].kind == "think"


def test_render_value_renders_empty_string() -> None:
    rendered = render_value("", None)
    assert rendered is not None
    assert rendered.raw == ""


def test_render_value_renders_message_lists() -> None:
    rendered = render_value([{"role": "user", "content": "hi"}], None)
    assert rendered is not None
    assert rendered.turns == (Turn("user", (text_block("hi"),)),)


@pytest.mark.parametrize(
    "value",
    [3, 0, 1.5, None, True, {"role": "user"}, [], [1, 2], [{"role": "user"}, {"content": "x"}]],
)
def test_render_value_leaves_other_values_to_json_display(value: object) -> None:
    assert render_value(value, None) is None


# Reconstruction ----------------------------------------------------------------------------

FRAGMENTS = [
    "<|im_start|>",
    "<|im_start|>user\n",
    "<|im_start|>assistant\n",
    "<|im_start|>system",
    "<|im_end|>",
    "<|endoftext|>",
    "<|vision_start|>",
    "<|image_pad|>",
    "<|image_pad|>" * 5,
    "<|video_pad|>",
    "<|imgpad|>",
    "<|audio_comp_pad|>",
    *(f"<{kind}>" for kind in ("think", "tool_call", "tools", "tool_response", "answer")),
    *(f"</{kind}>" for kind in ("think", "tool_call", "tools", "tool_response", "answer")),
    '{"name": "f", "arguments": {}}',
    "<",
    ">",
    "|>",
    "<|",
    "/",
    "\n",
    "\n\n",
    " ",
    "text",
    "数学",
    "🙂",
    "\\frac{1}{2}",
    "<script>",
]


def random_text(rng: random.Random) -> str:
    return "".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(0, 30)))


@pytest.mark.parametrize("mask", [None, PADS, compile_mask(r"x*|<\|im_end\|>|\n")])
def test_render_text_reconstructs_input_exactly(mask: re.Pattern[str] | None) -> None:
    rng = random.Random(20240501)
    for _ in range(500):
        text = random_text(rng)
        rendered = render_text(text, mask)
        assert reconstruct(rendered) == text, text
        assert rendered.raw == text
        assert rendered.chat == ("<|im_start|>" in text)
        for turn in rendered.turns:
            for block in turn.blocks:
                assert all(span.text for span in block.spans), text
                assert all(span.count >= 1 for span in block.spans), text


def test_reconstruct_expands_pad_runs_and_restores_tags() -> None:
    rendered = Rendered(
        (
            Turn(
                "user",
                (Block("think", (Span("pad", "<|p|>", 3),), opened=True, closed=False),),
                "<|im_start|>user\n",
                "<|im_end|>",
            ),
        ),
        chat=True,
        raw="",
    )
    assert reconstruct(rendered) == "<|im_start|>user\n<think><|p|><|p|><|p|><|im_end|>"


def test_display_spans_drop_the_line_breaks_around_a_blocks_content_only() -> None:
    rendered = render_text("<think>\n\nstep one\nstep two\n</think>\nanswer\n", None)
    think, after = rendered.turns[0].blocks
    assert think.text == "\n\nstep one\nstep two\n"  # nothing lost
    assert "".join(s.text for s in think.display_spans) == "step one\nstep two"
    assert after.display_spans == after.spans  # plain text is shown as it is


def test_display_spans_keep_tokens_at_the_edges_of_a_block() -> None:
    rendered = render_text("<answer>\n<|box_start|>4<|box_end|>\n</answer>", None)
    (answer,) = rendered.turns[0].blocks
    assert [(s.kind, s.text) for s in answer.display_spans] == [
        ("special", "<|box_start|>"),
        ("text", "4"),
        ("special", "<|box_end|>"),
    ]
