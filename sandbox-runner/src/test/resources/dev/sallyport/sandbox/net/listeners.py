# Test helper run inside a network namespace: serves "tcp|host|port|banner" (sends the banner to each client)
# and "udp|host|port|reply" (answers each datagram), prints "ready", and exits when stdin closes.
import socket, sys, threading

def tcp(host, port, banner):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((host, port))
    s.listen(16)
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

for spec in sys.argv[1:]:
    proto, host, port, text = spec.split('|')
    (tcp if proto == 'tcp' else udp)(host, int(port), text)
print('ready', flush=True)
sys.stdin.read()
