// Validates Kubernetes manifests offline against the API schemas the npm package kubernetes-models ships:
//   node validate-manifests.mjs NODE_MODULES FILE...
// Each document is checked as its apiVersion and kind say (types, required fields, enums, formats); prints one
// line per document, "ok FILE KIND NAME" or "invalid FILE KIND NAME: what", and exits 1 when any is invalid.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [modules, ...files] = process.argv.slice(2);
const yaml = createRequire(join(modules, "noop.js"))("yaml");
let failed = false;
for (const file of files) {
  for (const doc of yaml.parseAllDocuments(readFileSync(file, "utf8"))) {
    if (doc.errors.length > 0) {
      console.log(`invalid ${file}: ${doc.errors[0].message}`);
      failed = true;
      continue;
    }
    const obj = doc.toJS();
    if (obj === null) {
      continue;
    }
    const [group, version] = obj.apiVersion.includes("/") ? obj.apiVersion.split("/") : [null, obj.apiVersion];
    const dir = group === null ? version : `${group}/${version}`;
    const name = `${obj.kind} ${obj.metadata?.name}`;
    let model;
    try {
      model = (await import(pathToFileURL(join(modules, "kubernetes-models", dir, `${obj.kind}.js`))))[obj.kind];
    } catch (e) {
      console.log(`invalid ${file} ${name}: no schema for ${obj.apiVersion} ${obj.kind}`);
      failed = true;
      continue;
    }
    try {
      new model(obj).validate();
      console.log(`ok ${file} ${name}`);
    } catch (e) {
      console.log(`invalid ${file} ${name}: ${e.message.split("\n")[0]}`);
      failed = true;
    }
  }
}
process.exit(failed ? 1 : 0);
