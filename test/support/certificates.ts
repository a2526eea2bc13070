// A private CA and a server certificate for 127.0.0.1 / localhost, made by the test suite itself
// with the system's openssl (nothing committed, nothing downloaded).
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface TestCertificates {
  readonly dir: string;
  /** The CA's certificate (what clients trust). */
  readonly ca: string;
  /** The server's certificate and key, signed by the CA. */
  readonly cert: string;
  readonly key: string;
}

export function makeCertificates(): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), "llm-edge-tls-"));
  const path = (name: string): string => join(dir, name);
  const openssl = (...args: string[]): void => void execFileSync("openssl", args, { stdio: "pipe" });
  openssl(
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-days",
    "2",
    "-subj",
    "/CN=llm-edge test CA",
    "-keyout",
    path("ca.key"),
    "-out",
    path("ca.pem"),
  );
  openssl(
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-subj",
    "/CN=localhost",
    "-keyout",
    path("server.key"),
    "-out",
    path("server.csr"),
  );
  writeFileSync(path("san.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
  openssl(
    "x509",
    "-req",
    "-in",
    path("server.csr"),
    "-CA",
    path("ca.pem"),
    "-CAkey",
    path("ca.key"),
    "-CAcreateserial",
    "-days",
    "2",
    "-extfile",
    path("san.ext"),
    "-out",
    path("server.pem"),
  );
  return { dir, ca: path("ca.pem"), cert: path("server.pem"), key: path("server.key") };
}
