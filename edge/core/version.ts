// The server's name and version, as /v1/info reports them (a test keeps the version equal to
// package.json's).
export const SERVER_NAME = "llm-edge";
export const SERVER_VERSION = "0.1.0";
