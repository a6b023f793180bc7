"""Emulated MQTT boards for tests (imported by test modules; fixtures in conftest)."""

from __future__ import annotations

from emulators.machine import EmulatedMachine
from emulators.mqtt_board import MqttBoard
from protocols.mqtt.client import MqttSettings


class Boards:
    """Emulated machines with MQTT boards on one broker; stopped at teardown."""

    def __init__(self, url: str, site: str) -> None:
        self.url = url
        self.site = site
        self.boards: dict[str, MqttBoard] = {}

    async def add(self, machine_id: str, **machine_kw: object) -> MqttBoard:
        machine = EmulatedMachine(machine_id, seed=len(self.boards) + 1, **machine_kw)  # type: ignore[arg-type]
        board = MqttBoard(machine, MqttSettings.from_url(self.url), self.site)
        await board.start()
        self.boards[machine_id] = board
        return board

    def endpoint(self, machine_id: str, query: str = "") -> str:
        return f"{self.url}/{self.site}/{machine_id}{'?' + query if query else ''}"

    async def close(self) -> None:
        for board in self.boards.values():
            await board.stop()
