/**
 * A URL's user name and password never reach a message: a store or server URL the user wrote
 * (`redis://:pw@host`, `valkey://user:pw@host`) is shown without them, parseable or not.
 */
export function withoutCredentials(text: string): string {
  return text.replace(/(\/\/)[^\s/@]*@/g, "$1");
}

/** `url` as the URL parser reads it, its user name and password cleared; undefined when it does not parse. */
export function parsedWithoutCredentials(url: string): URL | undefined {
  const parsed = URL.parse(url);
  if (!parsed) return undefined;
  parsed.username = "";
  parsed.password = "";
  return parsed;
}
