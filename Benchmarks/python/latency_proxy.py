"""A TCP proxy that holds each request for a fixed time before passing it on: the round trip of a
storage account in another place, for measuring what latency does to a run (Benchmarks/latency.sh).

    python3 latency_proxy.py LISTEN_PORT TARGET_PORT DELAY_MS

Bytes from the client wait DELAY_MS when they start a new burst (a request), then go on in
order; answers pass at once. Standard library only.
"""

import asyncio
import sys


async def pipe(reader, writer, delay):
    try:
        while True:
            data = await reader.read(1 << 16)
            if not data:
                break
            if delay:
                await asyncio.sleep(delay)
                # The rest of the request, already here, goes on without waiting again.
                while not reader.at_eof() and len(reader._buffer):  # noqa: SLF001 - drain what has arrived
                    data += await reader.read(1 << 16)
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        writer.close()


async def main(listen, target, delay):
    async def handle(client_reader, client_writer):
        server_reader, server_writer = await asyncio.open_connection("127.0.0.1", target)
        await asyncio.gather(pipe(client_reader, server_writer, delay), pipe(server_reader, client_writer, 0))

    server = await asyncio.start_server(handle, "127.0.0.1", listen)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]) / 1000))
