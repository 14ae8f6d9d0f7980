// A grpc-node (@grpc/grpc-js) client of the test's echo.Echo service, configured only through the environment a
// sandboxed program gets: https_proxy (the proxy) and GRPC_DEFAULT_SSL_ROOTS_FILE_PATH (the proxy's CA).
// Usage: node echo-client.js HOST:PORT unary|bidi [AUTHORIZATION]. Prints REPLY lines, then STATUS <code> <details>.
'use strict';
const grpc = require('@grpc/grpc-js');

const [target, mode, auth] = process.argv.slice(2);
const client = new grpc.Client(target, grpc.credentials.createSsl());
const metadata = new grpc.Metadata();
if (auth) {
  metadata.set('authorization', auth);
}
const raw = (b) => b;
const options = { deadline: Date.now() + 10000 };

function done(code, details) {
  console.log(`STATUS ${code} ${details || ''}`);
  client.close();
}

if (mode === 'unary') {
  client.makeUnaryRequest('/echo.Echo/Say', raw, raw, Buffer.from('hello from node'), metadata, options,
    (err, reply) => {
      if (err) {
        done(err.code, err.details);
        return;
      }
      console.log(`REPLY ${reply.toString()}`);
      done(0);
    });
} else if (mode === 'bidi') {
  const call = client.makeBidiStreamRequest('/echo.Echo/Chat', raw, raw, metadata, options);
  let sent = 0;
  call.on('data', (reply) => {
    console.log(`REPLY ${reply.toString()}`);
    if (++sent < 3) {
      call.write(Buffer.from(`node ${sent}`));
    } else {
      call.end();
    }
  });
  call.on('status', (status) => done(status.code, status.details));
  call.on('error', () => {});   // the status event reports it
  call.write(Buffer.from('node 0'));
} else {
  console.error(`echo-client: mode ${mode} (expected: unary or bidi)`);
  process.exit(2);
}
