# Test helper run inside a network namespace: tries each target and prints "name result elapsed_ms".
# Targets are "name|tcp|host|port" or "name|udp|host|port". Results: ok:<reply>, refused, unreachable,
# timeout, error-<errno>. Every attempt is bounded by TIMEOUT seconds.
import errno, socket, sys, time

TIMEOUT = 2.0

def attempt(proto, host, port):
    family = socket.AF_INET6 if ':' in host else socket.AF_INET
    kind = socket.SOCK_STREAM if proto == 'tcp' else socket.SOCK_DGRAM
    address = socket.getaddrinfo(host, port, family, kind)[0][4]
    s = socket.socket(family, kind)
    s.settimeout(TIMEOUT)
    try:
        s.connect(address)
        if proto == 'udp':
            s.send(b'ping')
        data = s.recv(64)
        return 'ok:' + data.decode('ascii', 'replace').strip()
    except ConnectionRefusedError:
        return 'refused'
    except socket.timeout:
        return 'timeout'
    except OSError as e:
        if e.errno in (errno.EHOSTUNREACH, errno.ENETUNREACH):
            return 'unreachable'
        return 'error-%s' % e.errno
    finally:
        s.close()

for target in sys.argv[1:]:
    name, proto, host, port = target.split('|')
    start = time.monotonic()
    result = attempt(proto, host, int(port))
    print('%s %s %d' % (name, result, int((time.monotonic() - start) * 1000)), flush=True)
