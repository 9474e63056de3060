"""The virtual table in a bare app: keyed rows, the cursor on its row, only visible rows drawn, mouse."""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.strip import Strip

from console.live.paging import Window
from console.widgets.live_table import Column
from console.widgets.virtual_table import PLACEHOLDER, Cells, VirtualTable

COLUMNS = (Column("n", "N", 6), Column("name", "Name", 12))
SIZE = (40, 12)
"""12 lines: one header and 11 rows on screen."""


class Bare(App[None]):
    def __init__(self, source: dict[str, Cells] | None = None) -> None:
        super().__init__()
        self.source = source
        self.asked: list[str] = []
        self.messages: list[object] = []

    def compose(self) -> ComposeResult:
        if self.source is None:
            yield VirtualTable(COLUMNS, id="t")
        else:
            data = self.source

            def cells(key: str) -> Cells | None:
                self.asked.append(key)
                return data.get(key)

            yield VirtualTable(COLUMNS, source=cells, id="t")

    def on_virtual_table_row_selected(self, message: VirtualTable.RowSelected) -> None:
        self.messages.append(("selected", message.key))

    def on_virtual_table_header_selected(self, message: VirtualTable.HeaderSelected) -> None:
        self.messages.append(("header", message.column))

    @property
    def table(self) -> VirtualTable:
        return self.query_one(VirtualTable)


def table_of(app: App[None]) -> VirtualTable:
    return app.query_one(VirtualTable)


def rows(keys: list[str]) -> list[tuple[str, list[Text]]]:
    return [(key, [Text(key), Text(f"name {key}")]) for key in keys]


def line(table: VirtualTable, y: int) -> str:
    return table.render_line(y).text


async def test_sync_keeps_order_and_counts_what_changed() -> None:
    async with Bare().run_test(size=SIZE) as pilot:
        table = table_of(pilot.app)
        first = table.sync(rows(["a", "b", "c"]))
        assert (first.added, first.removed, first.changed) == (3, 0, 0)
        again = table.sync([("c", [Text("c"), Text("renamed")]), *rows(["a", "d"])])
        assert (again.added, again.removed, again.changed) == (1, 1, 1)
        assert table.keys == ["c", "a", "d"]
        await pilot.pause()
        assert line(table, 0).split() == ["N", "Name"]
        assert line(table, 1).split() == ["c", "renamed"]
        assert line(table, 3).split() == ["d", "name", "d"]


async def test_cursor_stays_on_its_row_when_rows_are_inserted_above() -> None:
    async with Bare().run_test(size=SIZE) as pilot:
        table = table_of(pilot.app)
        keys = [f"k{n}" for n in range(100)]
        table.sync(rows(keys))
        table.focus()
        for _ in range(20):
            await pilot.press("j")
        await pilot.pause()
        assert (table.cursor_row, table.current_key) == (20, "k20")
        assert table.window == Window(10, 20)
        table.sync(rows(["new1", "new2", "new3", *keys]))
        await pilot.pause()
        assert (table.cursor_row, table.current_key) == (23, "k20")
        assert table.window == Window(13, 23), "the view moves with the row: what was on screen stays"
        assert line(table, 11).split()[0] == "k20"


async def test_cursor_keeps_its_place_when_its_row_goes() -> None:
    async with Bare().run_test(size=SIZE) as pilot:
        table = table_of(pilot.app)
        table.sync(rows(["a", "b", "c", "d"]))
        table.move_cursor(row=2)
        table.sync(rows(["a", "b", "d"]))
        assert table.current_key == "d"
        table.sync(rows(["a"]))
        assert table.current_key == "a"
        table.sync([])
        assert table.current_key is None


async def test_only_visible_rows_are_asked_for_their_cells() -> None:
    data: dict[str, Cells] = {f"k{n}": (Text(str(n)), Text(f"row {n}")) for n in range(100_000)}
    app = Bare(data)
    async with app.run_test(size=SIZE) as pilot:
        table = app.table
        table.focus()
        table.set_keys(list(data))
        await pilot.pause()
        assert set(app.asked) == {f"k{n}" for n in range(11)}
        app.asked.clear()
        await pilot.press("G")
        await pilot.pause()
        assert table.current_key == "k99999"
        assert set(app.asked) == {f"k{n}" for n in range(99_989, 100_000)}
        assert line(table, 11).split() == ["99999", "row", "99999"]


async def test_a_cursor_move_repaints_two_lines_and_a_refresh_the_rows_that_changed() -> None:
    data: dict[str, Cells] = {f"k{n}": (Text(str(n)), Text(f"row {n}")) for n in range(50)}
    app = Bare(data)
    async with app.run_test(size=SIZE) as pilot:
        table = app.table
        table.focus()
        table.set_keys(list(data))
        await pilot.pause()
        painted: list[int] = []
        render = table.render_line

        def counting(y: int) -> Strip:
            painted.append(y)
            return render(y)

        table.render_line = counting  # type: ignore[method-assign]
        await pilot.press("down")
        await pilot.pause()
        assert sorted(set(painted)) == [1, 2], "the line the cursor left and the one it came to"
        painted.clear()
        data["k5"] = (Text("5"), Text("changed"))
        table.refresh_rows()
        await pilot.pause()
        assert sorted(set(painted)) == [6]
        assert line(table, 6).split() == ["5", "changed"]


async def test_unchanged_cells_are_not_rendered_again_and_missing_rows_are_placeholders() -> None:
    data: dict[str, Cells] = {f"k{n}": (Text(str(n)), Text(f"row {n}")) for n in range(5)}
    app = Bare(data)
    async with app.run_test(size=SIZE) as pilot:
        table = app.table
        table.set_keys([*data, "gone"])
        await pilot.pause()
        app.asked.clear()
        drawn = table.render_line(2)
        assert table.render_line(2) is drawn, "same cells: the line drawn before"
        assert app.asked == ["k1", "k1"]
        data["k1"] = (Text("1"), Text("changed"))
        table.refresh_rows(["k1"])
        assert line(table, 2).split() == ["1", "changed"]
        assert line(table, 6).strip() == PLACEHOLDER


async def test_zebra_stripes_cursor_and_cell_styles() -> None:
    async with Bare().run_test(size=SIZE) as pilot:
        table = table_of(pilot.app)
        table.sync([("a", [Text("a"), Text("late", style="red")]), *rows(["b", "c"])])
        table.focus()
        table.move_cursor(row=2)
        await pilot.pause()

        def background(y: int) -> object:
            return next(iter(table.render_line(y))).style.bgcolor  # type: ignore[union-attr,unused-ignore]

        assert background(1) != background(2), "even and odd rows differ"
        assert background(3) not in (background(1), background(2)), "the cursor row stands out"
        late = [seg for seg in table.render_line(1) if seg.text.strip() == "late"]
        assert late and late[0].style is not None and late[0].style.color is not None
        assert late[0].style.color.name == "red"


async def test_click_selects_header_click_asks_to_sort_wheel_scrolls() -> None:
    app = Bare()
    async with app.run_test(size=SIZE) as pilot:
        table = app.table
        table.sync(rows([f"k{n}" for n in range(50)]))
        await pilot.pause()
        await pilot.click(VirtualTable, offset=(2, 4))
        assert table.current_key == "k3"
        await pilot.click(VirtualTable, offset=(2, 4))
        await pilot.click(VirtualTable, offset=(10, 0))
        assert app.messages == [("selected", "k3"), ("header", "name")]
        table.post_message(events.MouseScrollDown(table, 2, 4, 0, 0, 0, False, False, False))
        await pilot.pause()
        assert table.scroll_y > 0
