// Base64 text → bytes, checked: the standard alphabet, padding optional, line breaks and spaces ignored (clients
// wrap long lines); anything else is undefined, so the caller names the part at fault.

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The decoded size of base64 text of `length` characters (without whitespace), at most. */
export function decodedSize(length: number): number {
  return Math.floor((length * 3) / 4);
}

/** The text without whitespace, or undefined when it is not base64. */
export function cleanBase64(text: string): string | undefined {
  const clean = text.replace(/[\s]+/g, "");
  if (!BASE64.test(clean) || clean.length % 4 === 1) return undefined;
  return clean;
}

/** Checked base64 (cleanBase64's) → bytes. */
export function decodeBase64(clean: string): Uint8Array {
  const binary = atob(clean);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
