/**
 * A URL's user name and password never reach a message: a store or server URL the user wrote
 * (`redis://:pw@host`, `valkey://user:pw@host`) is shown without them, parseable or not.
 */
export function withoutCredentials(text: string): string {
  return text.replace(/(\/\/)[^\s/@]*@/g, "$1");
}
