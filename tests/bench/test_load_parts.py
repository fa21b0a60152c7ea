"""bench.load_parts: a load run's processes sorted into parts, and the figures read back."""

import os
import socket
import subprocess
import sys
import threading

import psutil

from bench.load_parts import (
    Account,
    Watcher,
    backend_client_port,
    completed_turns,
    context_switches,
    part_of,
    socket_owners,
    two_core_turns_a_minute,
)

CELERY = ["/x/.venv/bin/python", "-m", "celery", "-A", "workers", "worker", "--pool", "threads"]


def test_a_worker_s_descendants_are_its_parsers_and_gunicorn_s_are_the_web():
    assert part_of(CELERY, ["client"]) == "worker"
    forkserver = ["/x/python", "-c", "from multiprocessing.forkserver import main; main(3)"]
    assert part_of(forkserver, ["worker 2", "client"]) == "parsers of worker 2"
    assert part_of(["/x/python", "-c", "child"], ["", "worker 1", "client"]) == (
        "parsers of worker 1"
    )
    gunicorn = ["/x/python", "-m", "gunicorn", "--bind", "127.0.0.1:1", "webapp:create_app()"]
    assert part_of(gunicorn, ["client"]) == "web"
    assert part_of(["/usr/bin/redis-server", "127.0.0.1:6380"], ["client"]) == "redis"
    assert part_of(["/x/python", "-m", "http.server", "1"], ["client"]) == "pages"
    assert part_of(["/x/python", "-m", "bench.fake_model_server", "tool"], ["client"]) == "model"


def test_a_backend_s_title_names_its_database_and_its_client_s_port():
    title = "postgres: 15/main: postgres lookout_test_ab12 127.0.0.1(45012) idle"
    assert backend_client_port(title) == ("lookout_test_ab12", 45012)
    assert backend_client_port("postgres: 15/main: checkpointer ") is None


def test_the_turns_completed_are_read_from_the_load_report_s_row_for_the_users():
    report = (
        "| users | turns completed / started | turns per minute | added p50 ms |\n"
        "|---|---|---|---|\n"
        "| 10 | 90 / 91 | 88.0 | 900.0 |\n"
        "| 500 | 1696 / 1696 | 1218.2 | 20100.0 |\n"
    )
    assert completed_turns(report, 500) == (1696, 1218.2)
    assert completed_turns(report, 100) is None


def test_two_cores_to_themselves_give_two_minutes_of_cpu_over_a_turn_s_cost():
    assert two_core_turns_a_minute(120.0) == 1000.0
    assert two_core_turns_a_minute(60.0, cores=1) == 1000.0


def test_the_process_holding_a_connection_s_local_port_is_found():
    server = socket.create_server(("127.0.0.1", 0))
    client = socket.create_connection(server.getsockname())
    try:
        port = client.getsockname()[1]
        assert socket_owners({port}, [os.getpid()]) == {port: os.getpid()}
        assert socket_owners({port}, [1]) == {}
    finally:
        client.close()
        server.close()


def main_thread_switches() -> int:
    """Return the context switches /proc/PID/status counts: the first thread's only."""
    with open(f"/proc/{os.getpid()}/status") as status:
        return sum(int(line.split()[-1]) for line in status if "ctxt_switches" in line)


def test_context_switches_count_every_thread_of_the_process():
    before, main_before = context_switches(os.getpid()), main_thread_switches()
    ticks = [threading.Event() for _ in range(50)]
    hold = threading.Event()

    def wait_each() -> None:
        for tick in ticks:
            tick.wait()
        hold.wait()  # alive while it is counted: an ended thread leaves /proc

    waiter = threading.Thread(target=wait_each)
    waiter.start()
    try:
        for tick in ticks:  # each wakes the waiting thread: a switch of that thread's own
            tick.set()
            threading.Event().wait(0.001)
        waiter_switches = (context_switches(os.getpid()) - before) - (
            main_thread_switches() - main_before
        )
        assert waiter_switches >= 50
    finally:
        hold.set()
        waiter.join()


def test_the_load_s_client_processes_are_all_the_clients():
    client = ["/x/python", "-m", "bench.load_users"]
    assert part_of(client, ["client"]) == "client"


def test_the_window_opens_on_the_threads_of_every_client_process():
    """The users spread over two client processes open the window: the threads counted are
    all the clients', not the first process's alone."""
    code = "import threading, time; [threading.Thread(target=time.sleep, args=(30,)).start() "
    code += "for _ in range(3)]; print(flush=True); time.sleep(30)"
    clients = [
        subprocess.Popen([sys.executable, "-c", code, "bench.load_users"], stdout=subprocess.PIPE)
        for _ in range(2)
    ]
    try:
        for client in clients:
            client.stdout.readline()  # its threads have started
        root = psutil.Process()
        account = Account(users=root.num_threads() + 8)
        watcher = Watcher(root, account, 0.1)
        watcher.sample()
        assert watcher.client_threads() == root.num_threads() + 8
        watcher.watch_window(watcher.client_threads())
        assert account.started is not None
        assert sum(seen.part == "client" for seen in account.seen.values()) == 3
    finally:
        for client in clients:
            client.kill()
            client.wait()
            client.stdout.close()
