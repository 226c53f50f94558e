"""The web table in a real headless Chromium (Debian's package, driven by Playwright): people
click cards, agents answer, links are shared, connections drop, the server restarts, and
finished games replay. Each module run starts real ``bigtwo serve`` processes on 127.0.0.1."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import play_agent
from playwright.sync_api import Browser, Page, expect, sync_playwright
from web_server import Server, free_port

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TURN = 20_000  # ms to wait for one turn to come round


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    s = Server(tmp_path_factory.mktemp("web") / "rooms.sqlite", pace=0.02, away=10.0)
    yield s
    s.stop()


def new_page(browser: Browser, url: str) -> Page:
    page = browser.new_context(viewport={"width": 1200, "height": 820}).new_page()
    page.goto(url)
    return page


def my_turn(page: Page, timeout: int = TURN) -> bool:
    """Wait until the page's seat is to play (True) or the match is over (False)."""
    page.wait_for_function(
        "() => { const s = document.querySelector('#status').textContent;"
        " return s.startsWith('Your turn') || s.startsWith('Match over'); }",
        timeout=timeout,
    )
    return page.locator("#status").inner_text().startswith("Your turn")


def seq(page: Page) -> int:
    return int(page.evaluate("() => live.state.seq"))


def click_play(page: Page) -> None:
    """Play the lowest legal play by clicking its cards in the hand and then Play (Pass when only pass is legal)."""
    before = seq(page)
    chips = page.locator(".legal-play")
    if chips.count() == 0:
        page.click("#pass")
    else:
        for card in chips.first.get_attribute("data-cards").split():
            page.click(f'#hand .card[data-card="{card}"]')
        page.click("#play")
    page.wait_for_function(f"() => live.state.seq > {before}", timeout=TURN)


def test_a_whole_game_against_agents_by_clicking_then_its_replay(browser: Browser, server: Server) -> None:
    room = server.room(variant="taiwan", seats=["person", "strong", "strong", "strong"])
    page = new_page(browser, room["links"][0]["url"])
    expect(page.locator("#hand .card")).to_have_count(13)
    expect(page.locator(".seat")).to_have_count(4)
    turns = 0
    while my_turn(page):
        if turns == 1:
            page.click("#coach")  # the coach: the strong agent's top plays, with their mean payoffs
            expect(page.locator("#coach-box .advice")).to_contain_text("Coach (strong)", timeout=TURN)
        click_play(page)
        turns += 1
    assert turns >= 3
    expect(page.locator("#status")).to_contain_text("Match over")
    left = [int(t) for t in page.locator(".seat .left").all_inner_texts()]
    assert 0 in left  # someone went out

    # the finished game's replay: every hand shown, step, jump and the coach for every move
    page.click("#replay-link")
    expect(page.locator(".rseat")).to_have_count(4, timeout=TURN)  # the coach searched every move first
    expect(page.locator(".rseat").first.locator("svg")).to_have_count(13)
    total = int(re.search(r"of (\d+)", page.locator("#r-step").inner_text()).group(1))
    assert total >= 4 * turns - 3
    page.click("#r-next")
    expect(page.locator("#r-step")).to_have_text(f"move 1 of {total}")
    expect(page.locator("#r-coach .advice")).to_be_visible()
    page.click("#r-last")
    expect(page.locator("#r-final")).to_contain_text("Match over")
    page.locator("#r-jump").fill("2")
    expect(page.locator("#r-step")).to_have_text(f"move 2 of {total}")


def test_an_illegal_click_is_explained_and_changes_nothing(browser: Browser, server: Server) -> None:
    room = server.room(variant="japan", seats=["person", "greedy", "greedy", "greedy"], seed=11)
    page = new_page(browser, room["links"][0]["url"])
    assert my_turn(page)
    hand = page.locator("#hand .card")
    cards = [hand.nth(i).get_attribute("data-card") for i in range(hand.count())]
    legal = {c for c in page.locator(".legal-play").evaluate_all("els => els.map(e => e.dataset.cards)")}
    # two cards of different ranks that are no play together
    pair = next((a, b) for a in cards for b in cards if a[:-1] != b[:-1] and f"{a} {b}" not in legal)
    before = seq(page)
    page.click(f'#hand .card[data-card="{pair[0]}"]')
    page.click(f'#hand .card[data-card="{pair[1]}"]')
    page.click("#play")
    expect(page.locator("#message")).to_contain_text("not a play")
    assert seq(page) == before
    expect(page.locator("#hand .card")).to_have_count(13)


def test_two_people_in_one_room(browser: Browser, server: Server) -> None:
    room = server.room(variant="japan", seats=["person", "greedy", "person", "greedy"], names=["ann", "", "bob", ""])
    ann, bob = (new_page(browser, link["url"]) for link in room["links"])
    for page in (ann, bob):
        expect(page.locator('.seat[data-seat="0"] .conn')).to_have_text("connected")
        expect(page.locator('.seat[data-seat="2"] .conn')).to_have_text("connected")
    moved = {0: 0, 2: 0}
    deadline = time.monotonic() + 60
    while moved[0] < 2 or moved[2] < 2:
        assert time.monotonic() < deadline
        for seat, page in ((0, ann), (2, bob)):
            if page.locator("#status").inner_text().startswith("Your turn"):
                other = bob if seat == 0 else ann
                expect(other.locator("#play")).to_be_disabled()  # not the other person's turn
                click_play(page)
                moved[seat] += 1
        time.sleep(0.05)
    assert "ann" in bob.locator('.seat[data-seat="0"] .name').inner_text()


def test_disconnect_then_reconnect_takes_the_seat_back(browser: Browser, server: Server) -> None:
    room = server.room(variant="japan", seats=["person", "greedy", "greedy", "greedy"], away_timeout=1.0)
    link = room["links"][0]["url"]
    watcher = new_page(browser, room["watch"])
    watcher.evaluate(  # note every move the spectator is told of
        "() => { window.seen = []; const show = window.onMessage;"
        " window.onMessage = (m) => { if (m.last_move) window.seen.push(m.last_move); show(m); }; }"
    )
    page = new_page(browser, link)
    assert my_turn(page)
    page.context.close()  # the connection drops on the person's turn
    expect(watcher.locator('.seat[data-seat="0"] .conn')).to_contain_text("away", timeout=TURN)
    # the game goes on: after the away time an agent plays the seat
    watcher.wait_for_function("() => window.seen.some(m => m.seat === 0 && m.by === 'stand-in')", timeout=TURN)
    back = new_page(browser, link)  # the same link takes the seat back
    expect(watcher.locator('.seat[data-seat="0"] .conn')).to_have_text("connected")
    assert my_turn(back)
    click_play(back)
    watcher.wait_for_function("() => window.seen.some(m => m.seat === 0 && m.by === 'person')", timeout=TURN)
    by = watcher.evaluate("() => window.seen.filter(m => m.seat === 0).map(m => m.by)")
    assert by.index("stand-in") < len(by) - 1 - by[::-1].index("person")


def test_a_server_restart_mid_game_resumes(browser: Browser, tmp_path: Path) -> None:
    port, db = free_port(), tmp_path / "rooms.sqlite"
    first = Server(db, pace=0.02, away=30, port=port)
    room = first.room(variant="japan", seats=["person", "greedy", "greedy", "greedy"])
    page = new_page(browser, room["links"][0]["url"])
    assert my_turn(page)
    click_play(page)
    assert my_turn(page)
    before = page.evaluate(
        "() => ({seq: live.state.seq, hand: live.state.hand, left: live.state.seats.map(s => s.cards_left)})"
    )
    status, out = first.stop()
    assert status == 0 and "stopped (SIGTERM)" in out
    expect(page.locator("#conn")).to_contain_text("reconnecting")
    second = Server(db, pace=0.02, away=30, port=port)
    try:
        expect(page.locator("#conn")).to_have_text("connection: connected", timeout=TURN)
        page.wait_for_function("() => live.state && live.ws.readyState === 1", timeout=TURN)
        after = page.evaluate(
            "() => ({seq: live.state.seq, hand: live.state.hand, left: live.state.seats.map(s => s.cards_left)})"
        )
        assert after == before
        assert my_turn(page)
        click_play(page)  # and the game goes on
    finally:
        second.stop()


def test_a_watch_room_plays_agents_at_the_pace_set(browser: Browser, server: Server) -> None:
    room = server.room(variant="japan", seats=["greedy", "heuristic", "random", "greedy"], pace=0.5)
    assert room["links"] == []
    page = new_page(browser, room["watch"])
    expect(page.locator("#pace-box")).to_be_visible()
    page.locator("#pace-live").fill("0")
    page.wait_for_function("() => live.state && live.state.over", timeout=TURN)
    expect(page.locator("#next-match")).to_be_visible()


def test_a_record_file_with_a_64_bit_seed_replays_and_shows_its_text_as_text(
    browser: Browser, server: Server, tmp_path: Path
) -> None:
    """The page sends a record file as it is (``JSON.parse`` would round a seed past 2**53, and
    the engine would refuse the deal), and what a record names is shown as text, never run."""
    from bigtwo.agents.registry import make_agent
    from bigtwo.env.envs.game import Game
    from bigtwo.env.records.record import write_record

    game = Game("japan", seed=2**64 - 12345)
    agent = make_agent("heuristic", game.variant)
    while not game.is_over:
        play_agent(game, agent)
    trap = '<img src=x onerror="window.xss=1">'
    path = write_record(tmp_path / "match.json", game.to_record(seats=[trap, "b", "c", "d"]))
    page = new_page(browser, server.url)
    expect(page.locator("#room-list")).to_be_attached()
    page.wait_for_function("() => document.querySelectorAll('#variant option').length > 0", timeout=90_000)
    page.set_input_files("#record-file", str(path))
    expect(page.locator("#r-step")).to_have_text(re.compile(r"^move 0 of \d+$"), timeout=TURN)
    page.click("#r-last")
    expect(page.locator("#r-final")).to_contain_text(trap)
    assert page.evaluate("() => window.xss") is None and page.locator("#rfelt img").count() == 0
