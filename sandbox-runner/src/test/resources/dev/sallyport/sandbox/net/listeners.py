# Test helper run inside a network namespace: serves "tcp|host|port|banner" (sends the banner to each client),
# "udp|host|port|reply" (answers each datagram) and "tls|host|port|body|cert.pem|key.pem" (answers one HTTP/1.1
# request per TLS connection with 200 and the body), prints "ready", and exits when stdin closes.
import socket, ssl, sys, threading

def listening(host, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((host, port))
    s.listen(16)
    return s

def tcp(host, port, banner):
    s = listening(host, port)
    def serve():
        while True:
            c, _ = s.accept()
            c.sendall(banner.encode() + b'\n')
            c.close()
    threading.Thread(target=serve, daemon=True).start()

def udp(host, port, reply):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((host, port))
    def serve():
        while True:
            _, peer = s.recvfrom(512)
            s.sendto(reply.encode(), peer)
    threading.Thread(target=serve, daemon=True).start()

def tls(host, port, body, cert, key):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    s = listening(host, port)
    def serve():
        while True:
            c, _ = s.accept()
            try:
                t = context.wrap_socket(c, server_side=True)
                t.settimeout(10)
                head = b''
                while b'\r\n\r\n' not in head:
                    more = t.recv(4096)
                    if not more:
                        break
                    head += more
                answer = body.encode() + b'\n'
                t.sendall(b'HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n' % len(answer)
                          + answer)
                t.close()
            except OSError:
                c.close()
    threading.Thread(target=serve, daemon=True).start()

for spec in sys.argv[1:]:
    proto, host, port, text, *files = spec.split('|')
    if proto == 'tls':
        tls(host, int(port), text, *files)
    else:
        (tcp if proto == 'tcp' else udp)(host, int(port), text)
print('ready', flush=True)
sys.stdin.read()
