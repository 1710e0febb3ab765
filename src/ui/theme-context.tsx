import { createContext, useContext } from "react";
import { plainTheme, type Theme } from "./theme.ts";

export const ThemeContext = createContext<Theme>(plainTheme);

export function useTheme(): Theme {
  return useContext(ThemeContext);
}
