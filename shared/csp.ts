/**
 * The renderer's Content-Security-Policy: one definition for Electron's app:// responses, the
 * browser-mode server and the <meta> tag Vite writes into index.html. Only our own scripts and styles;
 * no eval, no inline script, no remote anything; fetch/EventSource only to our own origin (the
 * browser-mode bridge). React sets styles through the CSSOM, which style-src does not restrict.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-src 'none'",
  "object-src 'none'",
].join('; ');
