declare module 'wave-ui:script' {
  const text: string;
  export default text;
}
declare module 'wave-ui:styles' {
  const text: string;
  export default text;
}
