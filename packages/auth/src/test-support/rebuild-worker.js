// Runs in a worker thread, as client.sync does: revive a descriptor by requiring its module (the
// built package, by name) and constructing the named export, then authenticate once.
const { parentPort, workerData } = require('node:worker_threads');

async function main() {
  const { descriptor, credentials } = workerData;
  const { module, exportName, options } = descriptor.$component;
  const Export = require(module)[exportName];
  const authenticator = new Export(options);
  try {
    const context = await authenticator.authenticate(credentials);
    parentPort.postMessage({
      ok: true,
      principalId: context.principalId,
      scheme: authenticator.securityScheme.toDict(),
    });
  } catch (error) {
    parentPort.postMessage({ ok: false, message: error.message, code: error.code });
  }
}

main();
