"""Stream measurements for the LLM proxy bench (stdlib only, one event loop):

  ttfb URL AUTH BODY N        time to the first `data:` byte of N sequential streams; prints
                              "TTFB p50_us p99_us"
  hold URL AUTH BODY N PID    opens N streams at once, waits until each has its first chunk,
                              samples PID's resident memory then and after all have ended;
                              prints "HOLD n_ok rss_idle_kb rss_open_kb rss_after_kb"
"""

import asyncio
import sys
import time
import urllib.parse


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


async def open_stream(url, auth, body):
    """Sends the request; returns the stream and the moment the first `data:` arrived."""
    parts = urllib.parse.urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    payload = body.encode()
    writer.write(
        (
            f"POST {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\nAuthorization: {auth}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\nConnection: close\r\n\r\n"
        ).encode()
        + payload
    )
    await writer.drain()
    seen = b""
    while b"data:" not in seen:
        chunk = await reader.read(4096)
        if not chunk:
            raise RuntimeError(f"stream ended before its first event: {seen[:300]!r}")
        seen += chunk
    return reader, writer, time.perf_counter(), seen


async def finish(reader, writer, seen):
    while True:
        chunk = await reader.read(65536)
        if not chunk:
            break
        seen += chunk
    writer.close()
    return b"data: [DONE]" in seen


async def ttfb(url, auth, body, n):
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        reader, writer, first, seen = await open_stream(url, auth, body)
        samples.append((first - start) * 1e6)
        if not await finish(reader, writer, seen):
            raise RuntimeError("a stream did not end with [DONE]")
    samples.sort()
    print(f"TTFB {samples[len(samples) // 2]:.0f} {samples[int(len(samples) * 0.99)]:.0f}")


async def hold(url, auth, body, n, pid):
    idle = rss_kb(pid)
    opened = await asyncio.gather(*(open_stream(url, auth, body) for _ in range(n)))
    open_rss = rss_kb(pid)
    done = await asyncio.gather(*(finish(r, w, s) for r, w, _, s in opened))
    await asyncio.sleep(0.5)
    print(f"HOLD {sum(done)} {idle} {open_rss} {rss_kb(pid)}")


if __name__ == "__main__":
    mode, url, auth, body, n = sys.argv[1:6]
    if mode == "ttfb":
        asyncio.run(ttfb(url, auth, body, int(n)))
    else:
        asyncio.run(hold(url, auth, body, int(n), int(sys.argv[6])))
