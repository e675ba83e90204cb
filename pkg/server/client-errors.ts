// Requests Node's HTTP/1 parser refuses before there is a request (fastify's default answers
// them in its own format): a request line or headers past the header limit, a slow or idle
// client past the headers timeout, a malformed request. They are answered on the socket in the
// path's error format, for the plain HTTP server and the HTTPS server's HTTP/1.1 connections alike.

import http from 'node:http';
import type { Socket } from 'node:net';
import { ApiError } from '../api/errors.js';
import { errorBodyFor } from './error-reply.js';

/**
 * The start of the request each HTTP/1 connection is receiving, up to its first line end: the
 * parser's error carries only the last chunk read (a TLS record, a TCP segment), which for a
 * long request line is its middle. Reset when a response finishes (the next request starts).
 */
const requestStarts = new WeakMap<Socket, { head: string; done: boolean }>();

/** Records where each request on `socket` starts (until its first CRLF, at most `cap` bytes). */
export function trackRequestStart(socket: Socket, cap: number): void {
  const state = { head: '', done: false };
  requestStarts.set(socket, state);
  socket.on('data', (chunk: Buffer) => {
    if (state.done) return;
    state.head += chunk.toString('latin1', 0, Math.min(chunk.length, cap + 2 - state.head.length));
    if (state.head.includes('\r\n') || state.head.length >= cap) state.done = true;
  });
}

/** A response on `socket` finished: what arrives next is a new request. */
export function requestFinished(socket: Socket | null | undefined): void {
  const state = socket && requestStarts.get(socket);
  if (state) {
    state.head = '';
    state.done = false;
  }
}

export interface ClientErrorLimits {
  maxUrlLength: number;
  maxHeaderSize: number;
}

/** The `clientError` handler: 414 (request line too long), 431 (headers), 408 (too slow), else 400. */
export function clientErrorHandler(limits: ClientErrorLimits): (error: Error, socket: Socket) => void {
  return (error, socket) => {
    const err = error as Error & { code?: string; rawPacket?: Buffer };
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const tracked = requestStarts.get(socket)?.head ?? '';
    // What was tracked when it is a request's start; else the parser's own chunk.
    const head = /^[A-Z]+ /.test(tracked) ? tracked : err.rawPacket ? err.rawPacket.subarray(0, limits.maxHeaderSize + 1024).toString('latin1') : '';
    const lineEnd = head.indexOf('\r\n');
    const requestLine = lineEnd >= 0 ? head.slice(0, lineEnd) : head;
    const target = /^[A-Z]+ (\S+)/.exec(requestLine)?.[1] ?? '';
    let apiErr: ApiError;
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') apiErr = new ApiError('RequestTimeout', 408, 'the request was not received in time');
    else if (err.code === 'HPE_HEADER_OVERFLOW') {
      apiErr =
        lineEnd < 0 || requestLine.length > limits.maxUrlLength
          ? uriTooLong(limits.maxUrlLength)
          : new ApiError('RequestHeaderFieldsTooLarge', 431, `request headers are larger than the limit of ${limits.maxHeaderSize} bytes`);
    } else apiErr = new ApiError('BadRequest', 400, 'malformed HTTP request');
    if (socket.writable) {
      const body = JSON.stringify(errorBodyFor(target.split('?')[0], apiErr));
      socket.write(
        `HTTP/1.1 ${apiErr.code} ${http.STATUS_CODES[apiErr.code] ?? ''}\r\nContent-Type: application/json; charset=utf-8\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy(err);
  };
}

export const uriTooLong = (maxUrlLength: number): ApiError => new ApiError('URITooLong', 414, `request URL is longer than the limit of ${maxUrlLength} bytes`);
