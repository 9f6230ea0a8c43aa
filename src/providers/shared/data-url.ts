/** A `data:` URL split into its media type and base64 payload; undefined for anything else. */
export function parseDataUrl(url: string): { mediaType: string; base64: string } | undefined {
  const match = /^data:([^;,]+)(?:;[^,]*?)?;base64,(.*)$/s.exec(url);
  if (!match) return undefined;
  return { mediaType: match[1].toLowerCase(), base64: match[2] };
}
