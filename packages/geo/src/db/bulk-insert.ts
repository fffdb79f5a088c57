// Multi-row INSERTs whose statement text is compiled once per shape: core's helper, typed by the Executor passed in.
export { insertMany } from '@keel/core';
