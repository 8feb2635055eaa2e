// The slice of React's API that examples/react/useCheckout.tsx uses, with the signatures
// of @types/react 19 (React itself is not a dependency of this repository). It lets
// `tsc --strict` check the hook's use of idemkey's types; it does not test React.
declare module "react" {
  type SetStateAction<S> = S | ((prev: S) => S);
  type Dispatch<A> = (value: A) => void;
  type DependencyList = readonly unknown[];
  type EffectCallback = () => void | (() => void);
  export function useState<S>(initialState: S | (() => S)): [S, Dispatch<SetStateAction<S>>];
  export function useEffect(effect: EffectCallback, deps?: DependencyList): void;
}

declare module "react/jsx-runtime" {
  export namespace JSX {
    interface Element { readonly $$typeof: symbol }
    interface ElementChildrenAttribute { children: {} }
    interface IntrinsicElements {
      button: {
        disabled?: boolean;
        onClick?: (event: MouseEvent) => void;
        children?: string | number | Element | (string | number | Element)[];
      };
    }
  }
  export function jsx(type: unknown, props: unknown, key?: string): JSX.Element;
  export function jsxs(type: unknown, props: unknown, key?: string): JSX.Element;
  export const Fragment: unique symbol;
}
