// The slice of React's API that examples/react/useCheckout.tsx uses, with the signatures
// of @types/react 19 (React itself is not a dependency of this repository). It lets
// `tsc --strict` check the hook's use of idemkey's types; it does not test React.
declare module "react" {
  type SetStateAction<S> = S | ((prev: S) => S);
  type Dispatch<A> = (value: A) => void;
  type DependencyList = readonly unknown[];
  type EffectCallback = () => void | (() => void);
  export interface FormEvent<T = Element> { currentTarget: T; preventDefault(): void }
  export function useState<S>(initialState: S | (() => S)): [S, Dispatch<SetStateAction<S>>];
  export function useEffect(effect: EffectCallback, deps?: DependencyList): void;
}

declare module "react/jsx-runtime" {
  export namespace JSX {
    interface Element { readonly $$typeof: symbol }
    interface ElementChildrenAttribute { children: {} }
    type Children = string | number | Element | (string | number | Element)[];
    interface IntrinsicElements {
      form: { id?: string; onSubmit?: (event: import("react").FormEvent) => void; children?: Children };
      button: { name?: string; disabled?: boolean; onClick?: (event: MouseEvent) => void; children?: Children };
      output: { id?: string; children?: Children };
    }
  }
  export function jsx(type: unknown, props: unknown, key?: string): JSX.Element;
  export function jsxs(type: unknown, props: unknown, key?: string): JSX.Element;
  export const Fragment: unique symbol;
}
