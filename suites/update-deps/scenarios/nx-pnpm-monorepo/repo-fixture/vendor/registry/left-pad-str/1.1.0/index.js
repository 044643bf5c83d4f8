/** leftPad(str, len, ch): deprecated, superseded by @strkit/pad. */
export function leftPad(str, len, ch = ' ') {
  str = String(str);
  while (str.length < len) str = ch + str;
  return str;
}
