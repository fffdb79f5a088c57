/** The interface version (OpenAPI `info.version`, MCP server version): a date, per Document 1 "Versioning". */
export const GEO_VERSION = '2026-09-20';
